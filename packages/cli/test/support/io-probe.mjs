// Preloaded into a band process (NODE_OPTIONS="--import <this file>"): as the process exits, it copies its
// /proc/self/io counters to the file BAND_IO_PROBE names. `rchar` counts every byte the process read through
// read(2) and friends, page cache or not: what a test compares to the sizes of the files it expects read.
import { readFileSync, writeFileSync } from 'node:fs';

process.on('exit', () => writeFileSync(process.env.BAND_IO_PROBE, readFileSync('/proc/self/io')));
