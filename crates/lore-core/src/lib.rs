//! Lore's domain: types, the predicate registry, and the lifecycle rules as pure functions.
//!
//! This crate does no I/O, reads no clock and knows nothing about SQL, HTTP or async. Every rule takes
//! its inputs as values (including `now`) and returns values, so that it can be tested exhaustively.

pub mod guard;
pub mod ids;
pub mod model;
pub mod normalize;
pub mod predicates;
pub mod projection;
pub mod reading;
pub mod search;
pub mod slot;
pub mod temporal;
pub mod time;

pub use model::*;
pub use predicates::{ObjectSpec, PredicateDef, Registry};
pub use time::Ts;
