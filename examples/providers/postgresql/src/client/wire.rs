//! The byte stream under a session (plain TCP or TLS) and PostgreSQL's message framing on it:
//! length-checked reads of backend messages and writes of frontend ones.

use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use bytes::BytesMut;
use postgres_protocol::message::backend::Message;

use super::{ErrorKind, PgError};

/// The longest backend message accepted. A server (or something posing as one) could otherwise
/// make the guest allocate up to 4 GiB by announcing a huge length; real messages are far
/// smaller (a DataRow holds at most 1 GiB per value, and providers read catalog rows).
pub(super) const MAX_MESSAGE_LEN: usize = 64 * 1024 * 1024;

/// A TCP connection that sends what is written only when the peer's answer is awaited (the
/// next read) or [`Socket::send_pending`] is called: one send per flight.
///
/// Why: in the guest, TCP_NODELAY is not available (wasi:sockets 0.2 has no such option;
/// wasi-libc accepts and ignores it), so Nagle's algorithm holds a second small send until the
/// first is acknowledged, and the server delays its ACK by up to 40 ms. The TLS handshake's
/// last flight, then the startup message, were separate sends: measured +95 ms per TLS login
/// in wasmtime. Writing each flight at once avoids that, natively too (fewer syscalls).
pub(super) struct Socket {
    pub(super) tcp: TcpStream,
    pending: Vec<u8>,
}

/// Above this many unsent bytes (a long statement), writes go out without waiting for a read.
const MAX_PENDING: usize = 64 * 1024;

impl Socket {
    pub(super) fn new(tcp: TcpStream) -> Socket {
        Socket {
            tcp,
            pending: Vec::new(),
        }
    }

    /// Sends what was written so far.
    pub(super) fn send_pending(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let result = self.tcp.write_all(&self.pending);
            self.pending.clear();
            result?;
        }
        Ok(())
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.send_pending()?;
        self.tcp.read(buf)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() > MAX_PENDING {
            self.send_pending()?;
        }
        Ok(buf.len())
    }

    /// Deliberately does not send: every exchange ends by reading the server's answer, which
    /// sends first (and [`Wire::terminate`] sends explicitly).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The connection's bytes: TCP, or TLS over TCP after an accepted SSLRequest.
pub(super) enum Transport {
    Plain(Socket),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Socket>>),
}

impl Transport {
    fn socket(&mut self) -> &mut Socket {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(tls) => &mut tls.sock,
        }
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Plain(socket) => &socket.tcp,
            Transport::Tls(tls) => &tls.sock.tcp,
        }
    }

    pub(super) fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.read(buf),
            Transport::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.write(buf),
            Transport::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(socket) => socket.flush(),
            Transport::Tls(tls) => tls.flush(),
        }
    }
}

/// A framed connection: reads whole backend messages, writes frontend ones.
pub(super) struct Wire {
    /// Buffered so a result of many small DataRows costs few socket reads (each one a host call
    /// in the guest).
    reader: BufReader<Transport>,
    /// `host:port`, for error messages.
    pub(super) peer: String,
    out: BytesMut,
    /// While set (during login), each message must arrive before it.
    deadline: Option<Instant>,
}

impl Wire {
    pub(super) fn new(transport: Transport, peer: String) -> Wire {
        Wire {
            reader: BufReader::with_capacity(16 * 1024, transport),
            peer,
            out: BytesMut::with_capacity(1024),
            deadline: None,
        }
    }

    pub(super) fn is_tls(&self) -> bool {
        self.reader.get_ref().is_tls()
    }

    /// Bounds every later read and write by `deadline` (`None`: no bound). Reading past it fails
    /// with a timeout error (see [`Wire::io_error`]).
    pub(super) fn set_deadline(&mut self, deadline: Option<Instant>) -> Result<(), PgError> {
        self.deadline = deadline;
        self.apply_deadline()
    }

    /// Sets the socket's timeouts to the time left: called before each message, so a server
    /// that drips bytes cannot stretch the login much past the deadline.
    fn apply_deadline(&self) -> Result<(), PgError> {
        let tcp = self.reader.get_ref().tcp();
        let timeout = match self.deadline {
            None => None,
            Some(deadline) => Some(remaining(deadline).ok_or_else(|| self.timed_out())?),
        };
        // Both work natively and on wasm32-wasip2 (wasi-libc maps SO_RCVTIMEO/SO_SNDTIMEO onto
        // its poll); the host's call deadline stays the outer bound either way.
        tcp.set_read_timeout(timeout)
            .and_then(|()| tcp.set_write_timeout(timeout))
            .map_err(|e| self.io_error("setting a timeout on", e))
    }

    /// Builds one or more frontend messages with `build` and sends them.
    pub(super) fn send(
        &mut self,
        build: impl FnOnce(&mut BytesMut) -> io::Result<()>,
    ) -> Result<(), PgError> {
        self.out.clear();
        build(&mut self.out).map_err(|e| PgError {
            kind: ErrorKind::Protocol,
            code: None,
            message: format!("cannot encode a message for {}: {e}", self.peer),
        })?;
        let transport = self.reader.get_mut();
        let result = transport
            .write_all(&self.out)
            .and_then(|()| transport.flush());
        result.map_err(|e| self.io_error("writing to", e))
    }

    /// Reads one backend message.
    pub(super) fn read_message(&mut self) -> Result<Message, PgError> {
        if self.deadline.is_some() {
            self.apply_deadline()?;
        }
        let mut header = [0u8; 5];
        self.reader
            .read_exact(&mut header)
            .map_err(|e| self.io_error("reading from", e))?;
        let tag = header[0];
        let declared = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        // The length counts itself but not the tag.
        let Some(body_len) = declared.checked_sub(4) else {
            return Err(self.protocol(format!(
                "message {:?} declares an impossible length {declared}",
                tag as char
            )));
        };
        if body_len > MAX_MESSAGE_LEN {
            return Err(self.protocol(format!(
                "message {:?} of {body_len} bytes exceeds the limit of {MAX_MESSAGE_LEN} bytes",
                tag as char
            )));
        }
        let mut frame = Vec::with_capacity(5 + body_len.min(64 * 1024));
        frame.extend_from_slice(&header);
        // `take` + `read_to_end` grows the buffer as bytes arrive, so a peer that announces a
        // large message but sends little costs little memory.
        let read = (&mut self.reader)
            .take(body_len as u64)
            .read_to_end(&mut frame)
            .map_err(|e| self.io_error("reading from", e))?;
        if read != body_len {
            return Err(self.io_error("reading from", io::ErrorKind::UnexpectedEof.into()));
        }
        let mut frame = BytesMut::from(&frame[..]);
        match Message::parse(&mut frame) {
            Ok(Some(message)) => Ok(message),
            Ok(None) => Err(self.protocol(format!("message {:?} is truncated", tag as char))),
            Err(e) => Err(self.protocol(format!("malformed message {:?}: {e}", tag as char))),
        }
    }

    /// Ends the session politely (Terminate, then TLS close_notify); errors are irrelevant
    /// because the connection is being dropped anyway.
    pub(super) fn terminate(&mut self) {
        let _ = self.send(|buf| {
            postgres_protocol::message::frontend::terminate(buf);
            Ok(())
        });
        if let Transport::Tls(tls) = self.reader.get_mut() {
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        let _ = self.reader.get_mut().socket().send_pending();
        let _ = self
            .reader
            .get_ref()
            .tcp()
            .shutdown(std::net::Shutdown::Both);
    }

    pub(super) fn protocol(&self, what: String) -> PgError {
        PgError {
            kind: ErrorKind::Protocol,
            code: None,
            message: format!("{what} (server {})", self.peer),
        }
    }

    fn timed_out(&self) -> PgError {
        PgError {
            kind: ErrorKind::Connect,
            code: None,
            message: format!("timed out logging in to {}", self.peer),
        }
    }

    /// A broken or timed-out connection. Timeouts only happen while a deadline is set (during
    /// login), so they are `Connect` errors; anything else is a broken connection.
    pub(super) fn io_error(&self, doing: &str, error: io::Error) -> PgError {
        if matches!(
            error.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            return self.timed_out();
        }
        let message = if error.kind() == io::ErrorKind::UnexpectedEof {
            format!("the server at {} closed the connection", self.peer)
        } else {
            format!("{doing} {}: {error}", self.peer)
        };
        PgError {
            kind: ErrorKind::Protocol,
            code: None,
            message,
        }
    }
}

/// The time left until `deadline`, or `None` once it has passed.
pub(super) fn remaining(deadline: Instant) -> Option<std::time::Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}
