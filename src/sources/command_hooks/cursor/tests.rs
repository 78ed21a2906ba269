//! Cursor adapter unit tests: recorded payload sequences written from the docs.
