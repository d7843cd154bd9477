//! Crash soak: tasks with scripted failures run through a loopback provider
//! that counts every request, while the one `switchback serve` is killed with
//! SIGKILL at random moments and started again on the same database under the
//! same replica name, on SQLite and on PostgreSQL. At the end every task is in
//! the state its script implies (or held as interrupted, when a kill caught its
//! call in flight, and then sent no more), no attempt was sent twice, no route
//! was lost, and the database passes its integrity checks.
//!
//! By default it runs the short form CI runs (1,000 tasks, 6 kills). The full
//! form is the same test with more:
//!
//! ```text
//! SWITCHBACK_SOAK_TASKS=1000 SWITCHBACK_SOAK_KILLS=40 \
//!     cargo nextest run --cargo-profile tests -p server --test all soak::
//! ```
//!
//! Each run prints its seed; `SWITCHBACK_SOAK_SEED=N` draws the same kill
//! schedule again (where the kills land in the work still depends on timing).

mod integrity;
mod provider;
mod run;
mod script;

/// The short form's tasks.
const TASKS: usize = 1_000;
/// The short form's kills while the tasks run.
const KILLS: usize = 6;

#[test]
fn tasks_survive_random_sigkills_on_sqlite() {
    run::soak(
        integrity::Database::sqlite(),
        run::Settings::from_env(TASKS, KILLS),
    );
}

#[test]
fn tasks_survive_random_sigkills_on_postgres() {
    run::soak(
        integrity::Database::postgres(),
        run::Settings::from_env(TASKS, KILLS),
    );
}
