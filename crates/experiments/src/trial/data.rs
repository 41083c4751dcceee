//! The data a trial trains on: a `[data]` table's dataset, loaded once per worker and shared by
//! its trials.

use std::{path::Path, sync::Arc};

use batchlab_datasets::{DataConfig, ImageSet, Pipeline};

use crate::error::RunError;

/// The examples of one data variant, shared by its trials.
#[derive(Debug, Clone)]
pub struct VariantData {
    /// Training examples.
    pub train: Arc<ImageSet>,
    /// Validation examples.
    pub validation: Arc<ImageSet>,
    /// Test examples.
    pub test: Arc<ImageSet>,
    /// How training batches are prepared.
    pub train_pipeline: Pipeline,
    /// How evaluation batches are prepared.
    pub eval_pipeline: Pipeline,
}

/// Reads a `[data]` table's dataset from `data_dir` into the shared form trials train on.
pub fn load_variant(config: &DataConfig, data_dir: &Path) -> Result<VariantData, RunError> {
    let data = config
        .load(data_dir)
        .map_err(|e| RunError::Other(e.to_string()))?;
    let splits = data.splits;
    Ok(VariantData {
        train: Arc::new(splits.train),
        validation: Arc::new(splits.validation),
        test: Arc::new(splits.test),
        train_pipeline: data.train,
        eval_pipeline: data.eval,
    })
}
