//! Grafana's query grammars and the dashboards' queries, shared by query_grammars.rs and
//! stack_metrics.rs.

pub mod dashboards;
pub mod grafana_vars;
pub mod lezer;
pub mod prometheus_config;
pub mod queries;
