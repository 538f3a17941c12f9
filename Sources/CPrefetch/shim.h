// A hint to the processor to start loading the cache line holding an address that is about
// to be written, so that the load overlaps other work. Swift has no way to say it; the
// hint never faults, whatever the address.
static inline void tasklog_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}
