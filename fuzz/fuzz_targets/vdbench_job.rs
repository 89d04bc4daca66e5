//! `storlab::fuzzing::vdbench_job` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::vdbench_job(data));
