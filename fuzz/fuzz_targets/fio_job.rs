//! `storlab::fuzzing::fio_job` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::fio_job(data));
