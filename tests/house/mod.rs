//! The house itself: its imports run one way, and its documentation's examples are real.

mod docs;
mod layout;
