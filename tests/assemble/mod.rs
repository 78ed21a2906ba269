//! Assembly as a collector receives it: properties over random streams, kept fuzz inputs, the
//! scrubber's corpus, cost, and who and where.

mod attribution;
mod cost;
mod fuzz_regressions;
mod properties;
mod secrets;
