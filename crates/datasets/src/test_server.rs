//! A loopback HTTP/1.1 server for the download tests: honours `Range: bytes=N-`, can cut the
//! first connection part-way, and records the ranges it was asked for.

use std::{
    io::{self, BufRead, Write},
    net::{TcpListener, TcpStream},
    sync::{Arc, Mutex},
};

use crate::{
    checksum::{digest_reader, Algorithm, Checksum},
    sources::Remote,
};

/// How the test server behaves.
#[derive(Clone, Default)]
pub struct Behaviour {
    pub body: Vec<u8>,
    /// Answer `Range` requests with 206 (otherwise 200 with the whole body).
    pub ranges: bool,
    /// On the first request, close the connection after this many body bytes.
    pub cut_first_after: Option<usize>,
    /// Answer every request with this status and no body.
    pub status: Option<u16>,
    /// When not empty, serve these files by the last segment of the request's path instead of
    /// `body` (404 for any other name).
    pub files: Vec<(&'static str, Vec<u8>)>,
}

/// A loopback HTTP/1.1 server, one request per connection, recording each request's
/// `Range` header (None when absent).
pub struct Server {
    /// `http://127.0.0.1:PORT/data.bin`; any path is served the same body.
    pub url: String,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    ranges_seen: Arc<Mutex<Vec<Option<String>>>>,
}

impl Server {
    pub fn start(behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let url = format!("{base}/data.bin");
        let ranges_seen = Arc::new(Mutex::new(Vec::new()));
        let seen = ranges_seen.clone();
        // The thread stays blocked in accept when the test ends; the process exit ends it.
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                let _ = serve(stream, &behaviour, n == 0, &seen);
            }
        });
        Self {
            url,
            base,
            ranges_seen,
        }
    }

    pub fn ranges(&self) -> Vec<Option<String>> {
        self.ranges_seen.lock().unwrap().clone()
    }
}

fn serve(
    mut stream: TcpStream,
    b: &Behaviour,
    first: bool,
    seen: &Mutex<Vec<Option<String>>>,
) -> io::Result<()> {
    let mut reader = io::BufReader::new(stream.try_clone()?);
    let mut range = None;
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("range") {
                range = Some(value.trim().to_owned());
            }
        }
    }
    seen.lock().unwrap().push(range.clone());
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let file = path.rsplit('/').next().unwrap_or("");
    let body = match b.files.iter().find(|(name, _)| *name == file) {
        _ if b.files.is_empty() => &b.body,
        Some((_, body)) => body,
        None => {
            write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )?;
            return Ok(());
        }
    };
    let len = body.len();
    if let Some(status) = b.status {
        write!(
            stream,
            "HTTP/1.1 {status} Whatever\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    }
    let start = range
        .as_deref()
        .filter(|_| b.ranges)
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|s| s.parse::<usize>().ok());
    let (head, body) = match start {
        Some(s) if s >= len => (
            format!("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n"),
            &body[0..0],
        ),
        Some(s) => (
            format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {s}-{}/{len}\r\nContent-Length: {}\r\n",
                len - 1,
                len - s
            ),
            &body[s..],
        ),
        None => (
            format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n"),
            &body[..],
        ),
    };
    write!(stream, "{head}Connection: close\r\n\r\n")?;
    match b.cut_first_after.filter(|_| first) {
        Some(k) => stream.write_all(&body[..k.min(body.len())])?,
        None => stream.write_all(body)?,
    }
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)
}

/// A [`Remote`] named `file` whose size and MD5 are those of `body`.
pub fn remote_for(body: &[u8], file: &'static str, size: bool) -> Remote {
    let md5 = digest_reader(body, Algorithm::Md5).unwrap();
    Remote {
        url: "https://example.invalid/data.bin",
        file,
        size: size.then_some(body.len() as u64),
        checksum: Some(Checksum::Md5(Box::leak(md5.into_boxed_str()))),
        decompressed: None,
    }
}
