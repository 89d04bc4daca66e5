//! Profiles: application models that produce ordinary [`crate::job::Job`]s (and, where they
//! judge, verdict rules). The engine knows nothing about them. Every constant cites its source
//! here and in docs/profiles.md.

pub mod exchange;
pub mod presets;
pub mod users;
