//! Tests of [`super`] (acquire.rs), against the loopback test server.

use super::*;
use crate::{
    mnist::FILES,
    test_server::{remote_for, Behaviour, Server},
};

/// MNIST's four files (any bytes: presence is what `locate` checks) served by a test server,
/// with remotes naming their sizes and checksums.
fn mnist_server() -> (Server, Vec<Remote>) {
    let names: Vec<&'static str> = FILES
        .iter()
        .map(|f| &*Box::leak(format!("{f}.gz").into_boxed_str()))
        .collect();
    let files: Vec<(&'static str, Vec<u8>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, vec![i as u8; 100 + i]))
        .collect();
    let remotes = files
        .iter()
        .map(|(name, body)| remote_for(body, name, true))
        .collect();
    let server = Server::start(Behaviour {
        files,
        ..Default::default()
    });
    (server, remotes)
}

fn fetch_from(server: &Server) -> Acquire {
    Acquire::Fetch {
        mirror: Some(server.base.clone()),
        progress: false,
    }
}

#[test]
fn a_missing_dataset_is_fetched_once_and_then_left_alone() {
    let (server, remotes) = mnist_server();
    let root = tempfile::tempdir().unwrap();
    let lines = ensure_from(
        DatasetName::Mnist,
        &remotes,
        root.path(),
        &fetch_from(&server),
    )
    .unwrap();
    assert!(lines.last().unwrap().contains("is ready in"), "{lines:?}");
    assert_eq!(server.ranges().len(), 4, "one request per file");
    assert!(locate(DatasetName::Mnist, root.path()).is_ok());

    let again = ensure_from(
        DatasetName::Mnist,
        &remotes,
        root.path(),
        &fetch_from(&server),
    )
    .unwrap();
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(server.ranges().len(), 4, "no request once it is there");
}

#[test]
fn offline_and_plan_fetch_nothing() {
    let (server, remotes) = mnist_server();
    let root = tempfile::tempdir().unwrap();
    let err = ensure_from(DatasetName::Mnist, &remotes, root.path(), &Acquire::Offline)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("mnist is not on this machine"), "{err}");
    assert!(err.contains("train-images-idx3-ubyte.gz"), "{err}");

    let plan = ensure_from(DatasetName::Mnist, &remotes, root.path(), &Acquire::Plan).unwrap();
    assert_eq!(plan.len(), 1);
    assert!(
        plan[0].contains("`run` fetches it first (4 files"),
        "{plan:?}"
    );
    assert!(server.ranges().is_empty());
    assert!(!root.path().join("mnist").exists());
}

#[test]
fn two_processes_starting_together_download_once() {
    let (server, remotes) = mnist_server();
    let root = tempfile::tempdir().unwrap();
    let acquire = fetch_from(&server);
    let results: Vec<Vec<String>> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| ensure_from(DatasetName::Mnist, &remotes, root.path(), &acquire)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap().unwrap())
            .collect()
    });
    assert_eq!(server.ranges().len(), 4, "each file downloaded once");
    assert_eq!(
        results
            .iter()
            .filter(|lines| lines.iter().any(|l| l.contains("by another process")))
            .count(),
        1,
        "{results:?}"
    );
}

#[test]
fn without_network_the_error_names_the_file_to_put_where() {
    let (_server, remotes) = mnist_server();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let root = tempfile::tempdir().unwrap();
    let acquire = Acquire::Fetch {
        mirror: Some(base),
        progress: false,
    };
    let err = ensure_from(DatasetName::Mnist, &remotes, root.path(), &acquire)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot download train-images-idx3-ubyte.gz"),
        "{err}"
    );
    assert!(
        err.contains(&root.path().join("mnist").display().to_string()),
        "{err}"
    );
}
