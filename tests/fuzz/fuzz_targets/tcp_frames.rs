//! TCP framing and reassembly: `pigsty_dns::serve::net::framing::Framer`, driven the way the connection
//! task in `src/serve/net/tcp.rs` drives it (push a read, take every complete frame, answer it, compact).
//!
//! Input: one seed byte, then the bytes a client sends. The seed picks how the stream is cut into reads
//! (1 byte at a time up to 4096, the server's read size, with random lengths in between). Checked
//! against a reference split of the whole stream:
//! - the same messages come out, in order, however the stream is cut, and a zero length closes;
//! - a message comes out in the read that completes it, never later (a later one could wait forever);
//! - after a compaction only the incomplete rest stays buffered (< 2 + 65,535 bytes);
//! - every message answered over TCP fits its 2-byte length.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pigsty_dns::dns::transport::Transport;
use pigsty_dns::serve::answer::{Limits, answer_into};
use pigsty_dns::serve::net::framing::{Frame, Framer};
use pigsty_dns_fuzz::zones;

const READ_CHUNK: usize = 4096;
const MAX_FRAME: usize = 2 + 65_535;

fuzz_target!(|data: &[u8]| run(data));

/// The messages of a whole stream, each with the offset just after it, and whether a zero length
/// closes it; written without the framer.
fn reference(stream: &[u8]) -> (Vec<(&[u8], usize)>, bool, usize) {
    let mut msgs = Vec::new();
    let mut pos = 0;
    while pos + 2 <= stream.len() {
        let len = usize::from(stream[pos]) << 8 | usize::from(stream[pos + 1]);
        if len == 0 {
            return (msgs, true, pos);
        }
        if pos + 2 + len > stream.len() {
            break;
        }
        msgs.push((&stream[pos + 2..pos + 2 + len], pos + 2 + len));
        pos += 2 + len;
    }
    (msgs, false, pos)
}

/// Read sizes from the seed: fixed for small seeds, else a xorshift sequence below a seed-chosen bound.
fn reads(seed: u8, len: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut x = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    let bound = match seed % 4 {
        0 => 1,
        1 => 7,
        2 => 300,
        _ => READ_CHUNK,
    };
    let mut left = len;
    while left > 0 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let n = if seed < 8 {
            bound
        } else {
            1 + (x as usize) % bound
        };
        let n = n.min(left);
        sizes.push(n);
        left -= n;
    }
    sizes
}

fn run(data: &[u8]) {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let (want, want_close, rest_at) = reference(stream);
    let view = &zones::META.view;
    let limits = Limits::default();
    let mut scratch = Vec::new();
    let mut framer = Framer::with_capacity(READ_CHUNK);
    let mut got = 0usize;
    let mut closed = false;
    let mut pushed = 0usize;
    for n in reads(seed, stream.len()) {
        framer.push(&stream[pushed..pushed + n]);
        pushed += n;
        while let Some(frame) = framer.next_frame() {
            let Frame::Message(msg) = frame else {
                closed = true;
                break;
            };
            let (expected, _) = want.get(got).expect("a message the stream does not hold");
            assert_eq!(msg, *expected, "message {got} differs");
            if answer_into(view, msg, Transport::Tcp, &limits, &mut scratch).is_some() {
                assert!(
                    scratch.len() <= 65_535,
                    "a TCP answer that cannot be framed"
                );
            }
            got += 1;
        }
        framer.compact();
        if closed {
            break;
        }
        let complete = want.iter().filter(|(_, end)| *end <= pushed).count();
        assert_eq!(
            got, complete,
            "a complete message was not handed out by the read that completed it"
        );
        assert!(
            framer.buffered() < MAX_FRAME,
            "more than an incomplete message buffered"
        );
    }
    assert_eq!(closed, want_close, "zero length close");
    assert_eq!(got, want.len(), "messages lost");
    if !closed {
        assert_eq!(
            framer.buffered(),
            stream.len() - rest_at,
            "the incomplete rest"
        );
    }
}
