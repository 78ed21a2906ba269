//! Qwen Code adapter tests: recorded payload sequences as the real CLI sends them.
