//! The commands a user with no collector runs: the local store and `report`.

mod report;
