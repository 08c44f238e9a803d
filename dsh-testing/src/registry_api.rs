//! Every use the testing kit makes of the registry's registration and hook API, in one
//! place: the harness a check runs each case in, and result codes as text.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::DynTool;
use dsh_runtime::hooks::{CallInfo, HookFuture, Next, Wrapper};
use dsh_runtime::{
    DispatchOutcome, RegisterError, RegistrationHandle, Registry, ToolError, ToolResult,
};

/// The call id of the run of a valid case that is cancelled while its body runs.
pub(crate) const CANCEL_DURING: &str = "check-cancel-during";

/// A result's error code as text.
pub(crate) fn code(result: &ToolResult) -> Option<&str> {
    result.code_str()
}

/// A fresh registry holding one tool, and a wrapper that records which calls reached the
/// body (and cancels the call it is told to while its body runs).
pub(crate) struct Harness {
    pub(crate) registry: Registry,
    probe: Arc<Probe>,
    _tool: RegistrationHandle,
    _probe: RegistrationHandle,
}

impl Harness {
    pub(crate) fn new(
        tool: DynTool,
        grace: Duration,
        cancel_after: Duration,
    ) -> Result<Harness, RegisterError> {
        // A job runtime, so tools that start background work through their context
        // (`ToolContext::jobs`) are checked doing it.
        let registry = Registry::builder()
            .detach_grace(grace)
            .jobs(dsh_runtime::jobs::JobRuntime::new())
            .build();
        let tool = registry.register_dyn(tool)?;
        let probe = Arc::new(Probe {
            reached: Mutex::new(HashSet::new()),
            cancel_after,
        });
        let wrapper = registry.add_wrapper(ProbeWrapper(probe.clone()));
        Ok(Harness {
            registry,
            probe,
            _tool: tool,
            _probe: wrapper,
        })
    }

    /// Whether the call `id` reached the body.
    pub(crate) fn reached(&self, id: &str) -> bool {
        self.probe
            .reached
            .lock()
            .map(|r| r.contains(id))
            .unwrap_or(false)
    }

    /// How many bodies the registry detached (they ignored cancellation).
    pub(crate) fn detached(&self) -> u64 {
        self.registry.detached_total()
    }
}

struct Probe {
    reached: Mutex<HashSet<String>>,
    cancel_after: Duration,
}

struct ProbeWrapper(Arc<Probe>);

impl Wrapper for ProbeWrapper {
    fn around<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move {
            let run = next.run();
            let outcome = if call.call_id() == CANCEL_DURING {
                tokio::pin!(run);
                tokio::select! {
                    biased;
                    out = &mut run => out,
                    _ = tokio::time::sleep(self.0.cancel_after) => {
                        call.cancellation().cancel();
                        run.await
                    }
                }
            } else {
                run.await
            };
            // The dispatch re-checks cancellation first: a call it aborts there never
            // reached the body.
            let before_body =
                matches!(&outcome, Ok(o) if o.code_str() == Some("ABORTED_BEFORE_DISPATCH"));
            if !before_body && let Ok(mut reached) = self.0.reached.lock() {
                reached.insert(call.call_id().to_string());
            }
            outcome
        })
    }
}
