//! `storlab::fuzzing::job_toml` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::job_toml(data));
