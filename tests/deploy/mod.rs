//! deploy/ and dashboards/ checked without Docker: the configs by the programs that run them,
//! the stack as local processes, and the queries by Grafana's own grammars.

mod compose;
mod deploy_config;
mod grammars;
mod query_grammars;
mod stack_configs;
mod stack_genai;
mod stack_metrics;
mod stack_scale;
#[cfg(unix)]
mod stack_script;
mod stack_traces;
