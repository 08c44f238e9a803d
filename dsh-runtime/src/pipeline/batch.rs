//! Concurrency: classifying calls ([`ExecutionMode`]) and running a batch.
//!
//! A batch limits concurrency with a [`Semaphore`] (a parallel call holds one permit, an
//! exclusive call all of them) and orders the policy stages and the closing stages of
//! its calls with two [`Turnstile`]s (call `i` enters a stage when call `i - 1` has left
//! it). The calls run as tasks of a [`JoinSet`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

use super::ToolCall;
use crate::error_code::PipelineCode;
use crate::panic;
use crate::registry::Registry;
use crate::result::{ResultData, ToolResult};
use crate::validate::is_valid;

/// How a call may be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
        let snap = self.snapshot(call.agent);
        let Some(entry) = snap.view().get(&call.name) else {
            return ExecutionMode::Exclusive;
        };
        let Ok(args) = call.arguments.peek(self.parse_options()) else {
            return ExecutionMode::Exclusive;
        };
        let tool = entry.tool();
        if !is_valid(&tool.definition().parameters, &args) {
            return ExecutionMode::Exclusive;
        }
        match panic::contain(|| tool.erased().is_concurrency_safe(&args)) {
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
    /// Tokio runtime they run one after another in this task. Dropping the returned
    /// future stops starting calls; the calls already started run to completion.
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
        let cap = u32::try_from(max_parallel.clamp(1, Semaphore::MAX_PERMITS)).unwrap_or(u32::MAX);
        let permits = Arc::new(Semaphore::new(cap as usize));
        let order = Arc::new(Order::default());
        let mut tasks = Detached(JoinSet::new());
        let mut index_of = HashMap::with_capacity(calls.len());
        let count = calls.len();
        for (index, call) in calls.into_iter().enumerate() {
            let wanted = match self.execution_mode(&call) {
                ExecutionMode::Parallel => 1,
                ExecutionMode::Exclusive => cap,
            };
            // The semaphore is fair: calls acquire in submission order, and an exclusive
            // call's request holds back every later one until it is granted.
            let Ok(permit) = permits.clone().acquire_many_owned(wanted).await else {
                break; // never closed
            };
            let gates = Gates {
                order: order.clone(),
                index,
            };
            let registry = self.clone();
            // Each call on a task of its own keeps what was installed around the batch:
            // its caller handler and its progress reporter.
            let handle = tasks
                .0
                .spawn(crate::caller::caller_scoped(crate::tool::progress_scoped(
                    async move {
                        let result = registry.execute_gated(call, Some(&gates)).await;
                        drop(gates);
                        drop(permit);
                        (index, result)
                    },
                )));
            index_of.insert(handle.id(), index);
        }
        let mut out: Vec<Option<ToolResult>> = vec![None; count];
        while let Some(joined) = tasks.0.join_next().await {
            match joined {
                Ok((index, result)) => out[index] = Some(result),
                Err(e) => {
                    if let Some(&index) = index_of.get(&e.id()) {
                        out[index] = Some(
                            ResultData::code(
                                PipelineCode::TaskFailed,
                                format!("tool call task failed: {e}"),
                            )
                            .freeze(),
                        );
                    }
                }
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    ResultData::code(
                        PipelineCode::TaskFailed,
                        "tool call task failed".to_string(),
                    )
                    .freeze()
                })
            })
            .collect()
    }
}

/// The order of the policy and closing stages across calls that a scheduler of its own
/// starts one after another (code mode's bridge), as [`Registry::execute_batch`] orders
/// its calls: the policy stages (pre-execute, approval, guards) of the calls entered
/// through one `CallOrder` run one call at a time, in the order the calls were entered,
/// and so do their post-execute, finalization and observers; bodies overlap freely.
#[derive(Default)]
pub struct CallOrder {
    order: Arc<Order>,
    entered: AtomicUsize,
}

impl std::fmt::Debug for CallOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOrder")
            .field("entered", &self.entered.load(Ordering::Relaxed))
            .finish()
    }
}

impl CallOrder {
    /// An empty order.
    pub fn new() -> Self {
        CallOrder::default()
    }
}

impl Registry {
    /// [`Registry::execute`] as the next call of `order` (its place is taken now, not when
    /// the future is first polled): its policy stages start once every call entered
    /// earlier has left theirs, its closing stages once every earlier call has left
    /// those. A future dropped before its turn gives its place up: it never holds back the
    /// calls entered after it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::{Arc, Mutex};
    /// use dsh_runtime::hooks::{CallInfo, HookFuture, PreDecision, PreExecute, PreNext};
    /// use dsh_runtime::{CallOrder, Registry, ToolCall, ToolError, tool};
    ///
    /// /// Say hello.
    /// #[tool(read_only, concurrency_safe)]
    /// async fn hello() -> String { "hello".to_string() }
    ///
    /// /// Records the calls entering and leaving pre-execute; the first one stays longer.
    /// struct Log(Arc<Mutex<Vec<String>>>);
    /// impl PreExecute for Log {
    ///     fn pre_execute<'a>(&'a self, call: &'a CallInfo<'a>, next: PreNext<'a>)
    ///         -> HookFuture<'a, Result<PreDecision, ToolError>> {
    ///         HookFuture::new(async move {
    ///             self.0.lock().unwrap().push(format!("in {}", call.call_id()));
    ///             if call.call_id() == "1" {
    ///                 tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    ///             }
    ///             self.0.lock().unwrap().push(format!("out {}", call.call_id()));
    ///             next.run().await
    ///         })
    ///     }
    /// }
    ///
    /// let registry = Registry::new();
    /// let _hello = registry.register(Hello).unwrap();
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let _hook = registry.add_pre_execute(Log(log.clone()));
    /// let order = CallOrder::new();
    /// let first = registry.execute_ordered(ToolCall::new("1", "hello", "{}"), &order);
    /// let second = registry.execute_ordered(ToolCall::new("2", "hello", "{}"), &order);
    /// // Polled together, and the second first: its policy still waits for the first's.
    /// let (b, a) = tokio::join!(second, first);
    /// assert_eq!(a.text(), "hello");
    /// assert_eq!(b.text(), "hello");
    /// assert_eq!(*log.lock().unwrap(), ["in 1", "out 1", "in 2", "out 2"]);
    /// # });
    /// ```
    pub fn execute_ordered(
        &self,
        call: ToolCall,
        order: &CallOrder,
    ) -> impl Future<Output = ToolResult> + Send + 'static {
        let gates = Gates {
            order: order.order.clone(),
            index: order.entered.fetch_add(1, Ordering::Relaxed),
        };
        let registry = self.clone();
        async move {
            let result = registry.execute_gated(call, Some(&gates)).await;
            drop(gates);
            result
        }
    }
}

/// A join set whose tasks keep running when it is dropped (a started body is always
/// awaited to completion, never dropped).
struct Detached<T: 'static>(JoinSet<T>);

impl<T: 'static> Drop for Detached<T> {
    fn drop(&mut self) {
        self.0.detach_all();
    }
}

/// One stage, entered by a batch's calls one at a time in submission order.
#[derive(Default)]
struct Turnstile {
    /// The index of the call whose turn it is (read without the lock on the way in).
    turn: AtomicUsize,
    /// Calls that left before their turn came (dropped early): skipped when it does.
    left_early: std::sync::Mutex<std::collections::BTreeSet<usize>>,
    changed: Notify,
}

impl Turnstile {
    /// Wait for call `index`'s turn.
    async fn enter(&self, index: usize) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check, so a `leave` in between is not missed.
            changed.as_mut().enable();
            if self.turn.load(Ordering::Acquire) >= index {
                return;
            }
            changed.await;
        }
    }

    /// Call `index` leaves (idempotent). On its turn, the turn passes to the next call
    /// that has not already left; before its turn, it is remembered and skipped then,
    /// so a call that ends early (its future dropped) never holds back the calls after
    /// it.
    fn leave(&self, index: usize) {
        let mut left_early = self
            .left_early
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let turn = self.turn.load(Ordering::Acquire);
        if index < turn {
            return;
        }
        if index > turn {
            left_early.insert(index);
            return;
        }
        let mut next = index + 1;
        while left_early.remove(&next) {
            next += 1;
        }
        self.turn.store(next, Ordering::Release);
        drop(left_early);
        self.changed.notify_waiters();
    }
}

/// The two ordered stages of a batch.
#[derive(Default)]
struct Order {
    policy: Turnstile,
    post: Turnstile,
}

/// One call's place in its batch's [`Order`]. Dropping it leaves both stages, so a call
/// that ends early never blocks the next.
pub(crate) struct Gates {
    order: Arc<Order>,
    index: usize,
}

impl Gates {
    /// Wait until every earlier call left the policy stages.
    pub(crate) async fn enter_policy(&self) {
        self.order.policy.enter(self.index).await;
    }

    /// Leave the policy stages (idempotent).
    pub(crate) fn exit_policy(&self) {
        self.order.policy.leave(self.index);
    }

    /// Wait until every earlier call left the closing stages.
    pub(crate) async fn enter_post(&self) {
        self.order.post.enter(self.index).await;
    }
}

impl Drop for Gates {
    fn drop(&mut self) {
        self.order.policy.leave(self.index);
        self.order.post.leave(self.index);
    }
}
