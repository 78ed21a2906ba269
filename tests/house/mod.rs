//! The house itself: its imports run one way, its files' names each say one concern, and its
//! documentation's examples are real.

mod docs;
mod layout;
mod names;
