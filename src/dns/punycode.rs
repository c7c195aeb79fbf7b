//! RFC 3492 punycode, decoding only: whether an `xn--` label (an IDNA A-label) is what it claims to
//! be. A name is served as its ASCII bytes either way; this only refuses a label that no resolver or
//! browser would show as a name (`xn--zz`), as every IDNA-aware tool refuses it.

const BASE: u32 = 36;
const TMIN: u32 = 1;
const TMAX: u32 = 26;
const SKEW: u32 = 38;
const DAMP: u32 = 700;

/// The characters `encoded` (the part after `xn--`) decodes to; `None` when it is not punycode.
pub fn decode(encoded: &str) -> Option<Vec<char>> {
    let (basic, rest) = match encoded.rfind('-') {
        Some(d) => (&encoded[..d], &encoded[d + 1..]),
        None => ("", encoded),
    };
    if !basic.is_ascii() {
        return None;
    }
    let mut out: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = rest.bytes().peekable();
    while digits.peek().is_some() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let digit = match digits.next()? {
                b @ b'a'..=b'z' => u32::from(b - b'a'),
                b @ b'A'..=b'Z' => u32::from(b - b'A'),
                b @ b'0'..=b'9' => u32::from(b - b'0') + 26,
                _ => return None,
            };
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                TMIN
            } else if k >= bias + TMAX {
                TMAX
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let points = out.len() as u32 + 1;
        bias = adapt(i - old_i, points, old_i == 0);
        n = n.checked_add(i / points)?;
        i %= points;
        let c = char::from_u32(n).filter(|c| !c.is_ascii())?;
        out.insert(i as usize, c);
        i += 1;
    }
    Some(out)
}

/// An `xn--` label's tail is valid when it decodes and holds a character that needed encoding.
pub fn is_a_label(encoded: &str) -> bool {
    decode(encoded).is_some_and(|cs| cs.iter().any(|c| !c.is_ascii()))
}

fn adapt(delta: u32, points: u32, first: bool) -> u32 {
    let mut delta = if first { delta / DAMP } else { delta / 2 };
    delta += delta / points;
    let mut k = 0;
    while delta > ((BASE - TMIN) * TMAX) / 2 {
        delta /= BASE - TMIN;
        k += BASE;
    }
    k + (BASE - TMIN + 1) * delta / (delta + SKEW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_rfc_samples_and_refuses_what_is_not_punycode() {
        let s = |e: &str| decode(e).map(|cs| cs.into_iter().collect::<String>());
        assert_eq!(s("mnchen-3ya").as_deref(), Some("münchen"));
        assert_eq!(s("bcher-kva").as_deref(), Some("bücher"));
        assert_eq!(
            s("ihqwcrb4cv8a8dqg056pqjye").as_deref(),
            Some("他们为什么不说中文")
        );
        assert!(is_a_label("mnchen-3ya"));
        assert_eq!(decode("zz"), None);
        assert!(!is_a_label("zz"));
        assert!(!is_a_label("abc-"), "ASCII only: nothing needed encoding");
        assert!(!is_a_label("99999999999999"), "overflow");
        assert!(!is_a_label("a_b"));
    }
}
