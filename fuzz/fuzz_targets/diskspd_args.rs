//! `storlab::fuzzing::diskspd_args` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::diskspd_args(data));
