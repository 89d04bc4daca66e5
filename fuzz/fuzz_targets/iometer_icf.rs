//! `storlab::fuzzing::iometer_icf` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::iometer_icf(data));
