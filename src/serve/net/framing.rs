//! DNS over TCP framing (RFC 1035 §4.2.2, RFC 7766 §8): the bytes read from a connection are split into
//! messages, each a 2-byte big-endian length and then the message. Pure: the connection task in `tcp`
//! reads and writes, this only buffers and splits, so it is tested and fuzzed on its own
//! (`tests/fuzz`, target `tcp_frames`).

/// What the buffered bytes hold next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A complete message, without its length.
    Message(&'a [u8]),
    /// A zero length: no message can be that short, so the connection is to be closed.
    Close,
}

/// The bytes of one connection not yet answered. Messages are handed out in order by [`next_frame`]
/// and dropped by [`compact`]; after a compaction only an incomplete message stays, so the buffer
/// never holds more than one pending message (2 + 65,535 bytes) plus what the last read added.
///
/// [`next_frame`]: Framer::next_frame
/// [`compact`]: Framer::compact
#[derive(Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
    /// Bytes at the start of `buf` already handed out.
    consumed: usize,
}

impl Framer {
    pub fn with_capacity(capacity: usize) -> Framer {
        Framer {
            buf: Vec::with_capacity(capacity),
            consumed: 0,
        }
    }

    /// Appends bytes read from the connection.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, [`Frame::Close`] for a zero length (returned again on every call), or
    /// `None` while the next message is incomplete.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        let rest = &self.buf[self.consumed..];
        let len = usize::from(u16::from_be_bytes([*rest.first()?, *rest.get(1)?]));
        if len == 0 {
            return Some(Frame::Close);
        }
        let msg = rest.get(2..2 + len)?;
        self.consumed += 2 + len;
        Some(Frame::Message(msg))
    }

    /// Drops the messages handed out, keeping the incomplete rest.
    pub fn compact(&mut self) {
        self.buf.drain(..self.consumed);
        self.consumed = 0;
    }

    /// Bytes buffered and not yet handed out.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.consumed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(msgs: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for m in msgs {
            v.extend_from_slice(&(m.len() as u16).to_be_bytes());
            v.extend_from_slice(m);
        }
        v
    }

    #[test]
    fn splits_pipelined_messages_across_any_read_boundaries() {
        let stream = framed(&[b"first", b"second message", &[7u8; 300]]);
        for chunk in 1..=stream.len() {
            let mut f = Framer::default();
            let mut got: Vec<Vec<u8>> = Vec::new();
            for piece in stream.chunks(chunk) {
                f.push(piece);
                while let Some(Frame::Message(m)) = f.next_frame() {
                    got.push(m.to_vec());
                }
                f.compact();
                assert!(f.buffered() < 2 + 300, "only an incomplete message stays");
            }
            assert_eq!(
                got,
                vec![
                    b"first".to_vec(),
                    b"second message".to_vec(),
                    vec![7u8; 300]
                ]
            );
            assert_eq!(f.buffered(), 0);
        }
    }

    #[test]
    fn a_zero_length_closes_and_stays_closed() {
        let mut f = Framer::default();
        f.push(&framed(&[b"q"]));
        f.push(&[0, 0, 0, 3, b'x']);
        assert_eq!(f.next_frame(), Some(Frame::Message(b"q")));
        assert_eq!(f.next_frame(), Some(Frame::Close));
        assert_eq!(f.next_frame(), Some(Frame::Close));
        let mut f = Framer::default();
        f.push(&[0]);
        assert_eq!(f.next_frame(), None, "half a length is incomplete");
        f.push(&[5, 1, 2]);
        assert_eq!(f.next_frame(), None);
        assert_eq!(f.buffered(), 4);
    }
}
