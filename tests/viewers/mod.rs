//! GenAI trace viewers run as users run them: Arize Phoenix and MLflow.

mod mlflow;
mod phoenix;
