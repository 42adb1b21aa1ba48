//! The reference session capability (being written; see the session issue).

use ge_spec::vocab::session::{SessionObservation, SessionScenario};
use ge_spec::vocab::Capability;
use ge_spec::{Answer, NotSupported};

/// Runs a session script.
pub fn run(scenario: &SessionScenario) -> Answer<SessionObservation> {
    let _ = scenario;
    Err(NotSupported::new(
        Capability::Session,
        "not implemented yet",
    ))
}
