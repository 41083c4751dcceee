//! Evaluating a model on a split: mean loss and accuracy, timed apart from training.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use batchlab_datasets::{ImageSet, Loader, Order, Pipeline};
use batchlab_models::{classification_loss, Model};
use burn::{
    module::AutodiffModule,
    tensor::{
        backend::{AutodiffBackend, Backend},
        ElementConversion,
    },
};

/// Mean loss, accuracy and seconds of one pass over `set` without gradients, in batches of
/// `batch_size` with `prefetch` batches prepared ahead.
pub(super) fn evaluate<B: AutodiffBackend>(
    model: &Model<B>,
    set: &Arc<ImageSet>,
    pipeline: &Pipeline,
    batch_size: usize,
    prefetch: usize,
    device: &B::Device,
) -> Result<(f64, f64, Duration), String> {
    let start = Instant::now();
    let model = model.valid();
    let order = Order {
        batch_size,
        shuffle: false,
        drop_last: false,
        seed: 0,
    };
    let loader = Loader::new(Arc::clone(set), pipeline.clone(), order, prefetch);
    let (mut loss_sum, mut correct, mut seen) = (0.0f64, 0usize, 0usize);
    for batch in loader.epoch(0) {
        let truth = batch.labels.clone();
        let (images, labels) = batch.to_device::<B::InnerBackend>(device);
        let logits = model.forward(images);
        let [n, classes] = logits.dims();
        let loss = classification_loss(logits.clone(), labels);
        loss_sum += loss.into_scalar().elem::<f64>() * n as f64;
        let values = logits
            .into_data()
            .to_vec::<f32>()
            .map_err(|e| format!("cannot read logits: {e:?}"))?;
        correct += values
            .chunks(classes)
            .zip(&truth)
            .filter(|(row, &label)| predicted(row) == usize::from(label))
            .count();
        seen += n;
    }
    <B::InnerBackend as Backend>::sync(device).map_err(|e| format!("device sync failed: {e:?}"))?;
    if seen == 0 {
        return Err("the evaluation split is empty".into());
    }
    Ok((
        loss_sum / seen as f64,
        correct as f64 / seen as f64,
        start.elapsed(),
    ))
}

/// The class a row of logits predicts: one logit means class 1 when positive.
fn predicted(row: &[f32]) -> usize {
    if row.len() == 1 {
        usize::from(row[0] > 0.0)
    } else {
        row.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_follow_the_head() {
        assert_eq!(predicted(&[0.3]), 1);
        assert_eq!(predicted(&[-0.3]), 0);
        assert_eq!(predicted(&[0.1, 2.0, -1.0]), 1);
    }
}
