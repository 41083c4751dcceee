use std::fs;

use batchlab_method::rows::stored;

use super::*;
use crate::shard::{merge_shards, run_dirs, Shard};

fn meta(status: &str) -> String {
    format!(
        r#"{{"experiment":"t","batchlab_version":"0","git_commit":"x","burn_version":"0.21.0","backend":"flex","device":"cpu","cpu":"cpu","threads":1,"os":"linux","started":"2026-11-27T00:00:00Z","ended":null,"resumed":[],"status":"{status}","error":null}}"#
    )
}

const TRIALS: &str = "trial,seed,batch_size,optimizer,variant,budget,status,epochs,steps,examples,train_seconds,data_seconds,eval_seconds,test_seconds,test_loss,test_accuracy,message\n";

/// A sharded run of two shards, each with one finished trial and `results.csv` rows of it.
fn sharded_run(second_status: &str) -> tempfile::TempDir {
    let run = tempfile::tempdir().unwrap();
    for (i, (id, status)) in [("a", "complete"), ("b", second_status)]
        .into_iter()
        .enumerate()
    {
        let dir = Shard { index: i, count: 2 }.dir(run.path());
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("shard.json"),
            format!(r#"{{"index":{i},"count":2}}"#),
        )
        .unwrap();
        fs::write(dir.join("meta.json"), meta(status)).unwrap();
        let record = format!("{id},0,8,sgd,standard,epochs,ok,1,32,256,0.5,0.1,0.1,0.1,0.9,0.7,\n");
        fs::write(dir.join("trials.csv"), format!("{TRIALS}{record}")).unwrap();
        fs::write(
            dir.join("results.csv"),
            format!("trial,v\n{id},1\n{id},2\n"),
        )
        .unwrap();
    }
    fs::create_dir_all(run.path().join("claims")).unwrap();
    fs::write(run.path().join("claims/a"), "0").unwrap();
    run
}

#[test]
fn a_finished_sharded_run_keeps_its_rows_once_and_merging_again_changes_nothing() {
    let run = sharded_run("complete");
    let top = run.path();
    let done = compact_run(top).unwrap();
    assert!(done.pruned_shards && !done.unfinished_shards, "{done:?}");
    let shard = Shard { index: 0, count: 2 }.dir(top);
    assert!(!shard.join("results.csv").exists() && shard.join("trials.csv").exists());
    assert!(!top.join("claims").exists());
    let merged = "trial,v\na,1\na,2\nb,1\nb,2\n";
    assert_eq!(
        stored::read_text(&top.join("results.csv"))
            .unwrap()
            .unwrap(),
        merged
    );
    // Rendering merges again: nothing changes, and a shard's view of the run is the top.
    merge_shards(top).unwrap();
    assert_eq!(
        stored::read_text(&top.join("results.csv"))
            .unwrap()
            .unwrap(),
        merged
    );
    assert_eq!(run_dirs(&shard), [top.to_path_buf()]);
    // Rows a shard writes after that would be lost by a merge: an error naming them.
    fs::write(shard.join("results.csv"), "trial,v\nc,1\n").unwrap();
    let err = merge_shards(top).unwrap_err().to_string();
    assert!(
        err.contains("0-of-2/results.csv") && err.contains("merged.json"),
        "{err}"
    );
}

#[test]
fn a_sharded_run_with_a_shard_to_finish_is_left_as_it_is() {
    let run = sharded_run("interrupted");
    let done = compact_run(run.path()).unwrap();
    assert!(!done.pruned_shards && done.unfinished_shards && done.tables.is_empty());
    let shard = Shard { index: 1, count: 2 }.dir(run.path());
    assert!(shard.join("results.csv").exists());
    assert!(run.path().join("claims/a").exists());
}

#[test]
fn large_tables_become_parquet_and_export_as_the_same_csv() {
    let run = tempfile::tempdir().unwrap();
    let rows: String = (0..2000)
        .map(|i| format!("t{i},{i},{}\n", f64::from(i) / 7.0))
        .collect();
    let table = format!("trial,step,loss\n{rows}");
    fs::write(run.path().join("results.csv"), &table).unwrap();
    fs::write(run.path().join("trials.csv"), TRIALS).unwrap();
    let done = compact_run(run.path()).unwrap();
    let kinds: Vec<_> = done
        .tables
        .iter()
        .map(|(p, c)| (p.file_name().unwrap().to_owned(), *c))
        .collect();
    assert!(
        matches!(kinds[0].1, stored::Compacted::Parquet { .. }),
        "{kinds:?}"
    );
    assert_eq!(kinds[1].1, stored::Compacted::Small);
    assert!(
        run.path().join("results.parquet").exists() && !run.path().join("results.csv").exists()
    );
    let out = run.path().join("csv");
    let written = export_csv(run.path(), &out).unwrap();
    assert_eq!(written, [out.join("results.csv"), out.join("trials.csv")]);
    assert_eq!(fs::read_to_string(out.join("results.csv")).unwrap(), table);
    let empty = tempfile::tempdir().unwrap();
    let err = export_csv(empty.path(), &empty.path().join("csv"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no raw table"), "{err}");
}
