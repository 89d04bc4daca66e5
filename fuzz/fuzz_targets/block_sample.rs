//! `storlab::fuzzing::block_sample` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::block_sample(data));
