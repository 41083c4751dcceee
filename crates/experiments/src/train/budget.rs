//! How long a trial trains: [`batchlab_method::rows::train::Budget`], the one type configs, the
//! plan, the claims, the results files and the reports share (re-exported here for the train
//! kind, below its config, claims and plan).

pub use batchlab_method::rows::train::Budget;
