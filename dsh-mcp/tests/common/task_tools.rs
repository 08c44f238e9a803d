//! Probe tools shared by the MCP task tests (`tasks.rs`, `tasks_2025.rs`): a slow echo,
//! a tool that hangs until cancelled (logging when it starts and stops), and a tool
//! without task support.
#![allow(dead_code)]

use std::time::Duration;

use dsh_runtime::{ToolContext, ToolError, tool};
use tokio::sync::watch;

/// Wait `ms` milliseconds (or until cancelled), then echo `text`.
#[tool(task = "optional")]
pub async fn slow_echo(cx: ToolContext, text: String, ms: u64) -> Result<String, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("echo: {text}")),
        () = cx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
    }
}

/// Say it started, report progress, and wait until cancelled.
#[tool(task = "optional")]
pub async fn hang(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.report_progress(1.0, Some(2.0), Some(&format!("{tag} started")));
    HANG.send_modify(|s| s.started.push(tag.clone()));
    cx.cancellation().cancelled().await;
    HANG.send_modify(|s| s.stopped.push(tag.clone()));
    Err(ToolError::new("stopped"))
}

#[derive(Default)]
pub struct HangLog {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
}

pub static HANG: std::sync::LazyLock<watch::Sender<HangLog>> =
    std::sync::LazyLock::new(|| watch::Sender::new(HangLog::default()));

/// Wait until `check` holds for the hang log (at most 30 s).
pub async fn until_hang(what: &str, check: impl Fn(&HangLog) -> bool) {
    let mut rx = HANG.subscribe();
    tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|log| check(log)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"))
        .unwrap();
}

/// No task support: always answered directly.
#[tool]
pub async fn plain(text: String) -> Result<String, ToolError> {
    Ok(format!("plain: {text}"))
}
