//! `storlab::fuzzing::report_rows` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::report_rows(data));
