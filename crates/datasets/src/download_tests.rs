//! Tests of [`super`] (download.rs).

use super::*;
use crate::{
    checksum::Checksum,
    test_server::{remote_for, Behaviour, Server},
};
use std::net::TcpListener;

fn content(len: usize) -> Vec<u8> {
    // Not periodic, so a misplaced range cannot line up by accident.
    let mut x: u32 = 12345;
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_clean_download_is_verified_and_renamed() {
    let body = content(300_000);
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let remote = remote_for(&body, "data.bin", true);
    let path = download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(path, dir.path().join("data.bin"));
    assert_eq!(fs::read(&path).unwrap(), body);
    assert_eq!(names(dir.path()), ["data.bin"]);
    assert_eq!(server.ranges(), [None]);

    // Already there and verified: no request at all.
    let again = download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(again, path);
    assert_eq!(server.ranges().len(), 1);
}

#[test]
fn an_interrupted_download_resumes_with_a_range_request() {
    let body = content(200_000);
    let k = 70_000;
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: true,
        cut_first_after: Some(k),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let remote = remote_for(&body, "data.bin", true);

    let err = download(&server.url, &remote, dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("resumes"), "{err}");
    assert!(err.contains(&server.url), "{err}");
    assert_eq!(names(dir.path()), ["data.bin.part"], "no final file yet");
    let part_len = fs::metadata(dir.path().join("data.bin.part"))
        .unwrap()
        .len();
    assert_eq!(part_len, k as u64);

    let path = download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(fs::read(&path).unwrap(), body);
    assert_eq!(names(dir.path()), ["data.bin"]);
    assert_eq!(server.ranges(), [None, Some(format!("bytes={k}-"))]);
}

#[test]
fn a_server_that_ignores_ranges_restarts_from_zero() {
    let body = content(100_000);
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: false,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    // A stale .part whose bytes are not even a prefix of the file.
    fs::write(dir.path().join("data.bin.part"), vec![0xAA; 5_000]).unwrap();
    let remote = remote_for(&body, "data.bin", true);
    let path = download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(fs::read(&path).unwrap(), body);
    assert_eq!(names(dir.path()), ["data.bin"]);
    assert_eq!(server.ranges(), [Some("bytes=5000-".to_owned())]);
}

#[test]
fn a_complete_part_is_finished_after_a_416() {
    let body = content(10_000);
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data.bin.part"), &body).unwrap();
    // Without a published size the client cannot tell the .part is complete, so it asks.
    let remote = remote_for(&body, "data.bin", false);
    let path = download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(fs::read(&path).unwrap(), body);
    assert_eq!(server.ranges(), [Some("bytes=10000-".to_owned())]);

    // With the size published, a complete .part is checked without asking.
    fs::rename(&path, dir.path().join("data.bin.part")).unwrap();
    let remote = remote_for(&body, "data.bin", true);
    download(&server.url, &remote, dir.path(), false).unwrap();
    assert_eq!(server.ranges().len(), 1);
    assert_eq!(names(dir.path()), ["data.bin"]);
}

#[test]
fn a_checksum_mismatch_deletes_the_part_and_says_where_to_put_a_copy() {
    let body = content(50_000);
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote {
        checksum: Some(Checksum::Md5("0123456789abcdef0123456789abcdef")),
        ..remote_for(&body, "data.bin", true)
    };
    let err = download(&server.url, &remote, dir.path(), false).unwrap_err();
    assert!(matches!(err, DatasetError::Checksum { .. }), "{err:?}");
    let err = err.to_string();
    for needle in [
        "data.bin",
        "md5 0123456789abcdef0123456789abcdef",
        &dir.path().join("data.bin").display().to_string(),
        &server.url,
        "50,000 bytes",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn a_refused_connection_says_where_to_put_a_copy() {
    let url = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/data.bin", listener.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote {
        url: "https://example.invalid/data.bin",
        file: "data.bin",
        size: Some(170_052_171),
        checksum: Some(Checksum::Md5("c32a1d4ab5d03f1284b67883e8d87530")),
        decompressed: None,
    };
    let err = download(&url, &remote, dir.path(), false)
        .unwrap_err()
        .to_string();
    let target = dir.path().join("data.bin");
    let expected = format!("cannot download data.bin from {url}: the connection was refused");
    assert!(err.starts_with(&expected), "{err}");
    let placement = format!(
        "Download it elsewhere and place it at {} (170,052,171 bytes, md5 \
         c32a1d4ab5d03f1284b67883e8d87530), then run the command again.",
        target.display()
    );
    assert!(err.ends_with(&placement), "{err}");
    assert!(names(dir.path()).is_empty());
}

#[test]
fn http_errors_keep_the_part_and_name_the_status() {
    let server = Server::start(Behaviour {
        status: Some(503),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data.bin.part"), b"12345").unwrap();
    let remote = Remote {
        url: "https://example.invalid/data.bin",
        file: "data.bin",
        size: None,
        checksum: None,
        decompressed: None,
    };
    let err = download(&server.url, &remote, dir.path(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("HTTP 503"), "{err}");
    assert!(
        err.contains("(size not published, no published checksum)"),
        "{err}"
    );
    assert_eq!(names(dir.path()), ["data.bin.part"]);
}

#[test]
fn a_wrong_file_under_the_final_name_is_replaced() {
    let body = content(20_000);
    let server = Server::start(Behaviour {
        body: body.clone(),
        ranges: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data.bin"), &body[..1000]).unwrap();
    let path = download(
        &server.url,
        &remote_for(&body, "data.bin", true),
        dir.path(),
        false,
    )
    .unwrap();
    assert_eq!(fs::read(path).unwrap(), body);
    assert_eq!(server.ranges(), [None]);
}

#[test]
fn helpers_format_sizes_and_ranges() {
    assert_eq!(group(0), "0");
    assert_eq!(group(999), "999");
    assert_eq!(group(1_000), "1,000");
    assert_eq!(group(170_052_171), "170,052,171");
    assert_eq!(
        parse_content_range("bytes 100-199/200"),
        Some((100, Some(200)))
    );
    assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
    assert_eq!(parse_content_range("bytes */200"), None);
}
