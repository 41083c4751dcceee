//! `batchlab check-fast-paths`: batchlab's convolution + ReLU with its own backward against
//! burn's `relu(conv.forward(x))` on the backend a run would use
//! (`batchlab_fast::conv::agreement`): on a lent GPU, the check that LibTorch's convolution
//! backward on the card (tch-cuda) agrees with burn's before its sweeps are timed.

use batchlab_fast::conv::agreement::check;
pub use batchlab_fast::conv::agreement::{Agreement, TOLERANCE, TOLERANCE_GPU};
use burn::tensor::backend::AutodiffBackend;

use crate::{
    backend::{dispatch, OnBackend},
    config::BackendConfig,
    error::RunError,
};

/// Every case of the check on the backend `config` names.
pub fn check_fast_paths(config: &BackendConfig) -> Result<Vec<Agreement>, RunError> {
    struct Check;
    impl OnBackend for Check {
        type Output = Vec<Agreement>;
        fn run<B: AutodiffBackend>(self, device: B::Device) -> Vec<Agreement> {
            check::<B>(&device)
        }
    }
    Ok(dispatch(config, Check)?)
}
