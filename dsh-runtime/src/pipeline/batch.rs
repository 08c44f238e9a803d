//! Concurrency: classifying calls and running a batch (contract §7).

use tokio_util::sync::CancellationToken;

use super::ToolCall;
use super::panic;
use super::result::{ResultData, ToolResult};
use crate::registry::Registry;
use crate::validate::is_valid;

/// How a call may be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionMode {
    /// May overlap with other parallel calls.
    Parallel,
    /// Runs alone.
    Exclusive,
}

impl Registry {
    /// `Parallel` only when the name resolves for the caller, the arguments are lossless
    /// and valid, and the tool's classifier returns `true` for them; anything else
    /// (unknown or hidden tool, invalid arguments, a panicking classifier) is
    /// `Exclusive`.
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        let snap = self.inner.snapshot();
        let Some(entry) = snap.view(call.agent).get(&call.name) else {
            return ExecutionMode::Exclusive;
        };
        let Ok(args) = call.arguments.peek(&self.inner.parse) else {
            return ExecutionMode::Exclusive;
        };
        if !is_valid(&entry.tool.definition().parameters, &args) {
            return ExecutionMode::Exclusive;
        }
        match panic::contain(|| entry.tool.erased().is_concurrency_safe(&args)) {
            Ok(true) => ExecutionMode::Parallel,
            _ => ExecutionMode::Exclusive,
        }
    }

    /// Run calls as an agent loop would, returning results in submission order.
    ///
    /// Calls start in submission order. Consecutive [`ExecutionMode::Parallel`] calls
    /// overlap, at most `max_parallel` at a time (`0` counts as `1`); an
    /// [`ExecutionMode::Exclusive`] call waits until every earlier call has finished,
    /// runs alone, and later calls start only after it finished (post-execute
    /// included). Across the batch, the policy stages (pre-execute, approval, guards)
    /// run one call at a time in submission order, and so do post-execute,
    /// finalization and observers, even when a later body finishes first. Each call's
    /// mode is classified just before it starts.
    ///
    /// Calls run as Tokio tasks (so parallel bodies use every worker thread); outside a
    /// Tokio runtime they run one after another in this task.
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        max_parallel: usize,
    ) -> Vec<ToolResult> {
        if tokio::runtime::Handle::try_current().is_err() {
            let mut out = Vec::with_capacity(calls.len());
            for call in calls {
                out.push(self.execute(call).await);
            }
            return out;
        }
        let cap = max_parallel.max(1);
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut handles = Vec::with_capacity(calls.len());
        let mut in_flight = 0usize;
        let mut prev: Option<(CancellationToken, CancellationToken)> = None;
        for call in calls {
            let mode = self.execution_mode(&call);
            let limit = match mode {
                ExecutionMode::Parallel => cap - 1,
                ExecutionMode::Exclusive => 0,
            };
            while in_flight > limit {
                // Every task signals exactly once (on drop), so this cannot hang.
                let _ = done_rx.recv().await;
                in_flight -= 1;
            }
            let gates = Gates::after(prev.take());
            prev = Some((gates.policy_done.clone(), gates.post_done.clone()));
            let registry = self.clone();
            let signal = SignalOnDrop(done_tx.clone());
            handles.push(tokio::spawn(async move {
                let result = registry.inner.execute(call, Some(&gates)).await;
                drop(gates);
                drop(signal);
                result
            }));
            in_flight += 1;
            if mode == ExecutionMode::Exclusive {
                let _ = done_rx.recv().await;
                in_flight -= 1;
            }
        }
        let mut out = Vec::with_capacity(handles.len());
        for handle in handles {
            out.push(match handle.await {
                Ok(result) => result,
                Err(e) => ResultData::failure(None, format!("tool call task failed: {e}")).freeze(),
            });
        }
        out
    }
}

struct SignalOnDrop(tokio::sync::mpsc::UnboundedSender<()>);

impl Drop for SignalOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Orders the policy and completion stages of a batch's calls: each call enters a stage
/// only after the previous call left it. Both latches open on drop, so a call that ends
/// early never blocks the next.
pub(crate) struct Gates {
    policy_prev: Option<CancellationToken>,
    pub(crate) policy_done: CancellationToken,
    post_prev: Option<CancellationToken>,
    pub(crate) post_done: CancellationToken,
}

impl Gates {
    fn after(prev: Option<(CancellationToken, CancellationToken)>) -> Gates {
        let (policy_prev, post_prev) = match prev {
            Some((a, b)) => (Some(a), Some(b)),
            None => (None, None),
        };
        Gates {
            policy_prev,
            policy_done: CancellationToken::new(),
            post_prev,
            post_done: CancellationToken::new(),
        }
    }

    pub(crate) async fn enter_policy(&self) {
        if let Some(p) = &self.policy_prev {
            p.cancelled().await;
        }
    }

    pub(crate) fn exit_policy(&self) {
        self.policy_done.cancel();
    }

    pub(crate) async fn enter_post(&self) {
        if let Some(p) = &self.post_prev {
            p.cancelled().await;
        }
    }
}

impl Drop for Gates {
    fn drop(&mut self) {
        self.policy_done.cancel();
        self.post_done.cancel();
    }
}
