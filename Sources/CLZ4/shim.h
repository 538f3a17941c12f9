#include <lz4.h>
#include <lz4hc.h>
