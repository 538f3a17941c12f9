// statx(2) asking for the link count and size only. Glibc's Swift module does not expose
// statx, and fstat(2) is not a substitute on a hot path: it also reads the file times, and
// on file systems with multigrain timestamps (ext4, xfs, btrfs, tmpfs on Linux 6.13 and
// later) a read time makes the next write store a fine-grained time, which costs a
// journalled inode update on every append.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/stat.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

/// 0 and the values on success; -1 with errno set otherwise. Where statx is missing (other
/// systems, Linux before 4.11) it falls back to fstat.
static inline int tasklog_links_and_size(int fd, unsigned int *links, unsigned long long *size) {
#ifdef SYS_statx
    struct statx sx;
    if (syscall(SYS_statx, fd, "", 0x1000 /* AT_EMPTY_PATH */, STATX_NLINK | STATX_SIZE, &sx) == 0) {
        *links = sx.stx_nlink;
        *size = sx.stx_size;
        return 0;
    }
    if (errno != ENOSYS) return -1;
#endif
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    *links = (unsigned int)st.st_nlink;
    *size = (unsigned long long)st.st_size;
    return 0;
}

// openat2(2) refusing every symbolic link on the way (RESOLVE_NO_SYMLINKS) and any path
// that leaves `dirfd` (RESOLVE_BENEATH): for files of a shared folder, which anyone may
// have replaced with a link. Glibc has no wrapper for it.

/// A descriptor, or -1 with errno set (ELOOP for a link, EXDEV for a path out of `dirfd`,
/// ENOSYS before Linux 5.6).
static inline int tasklog_open_beneath(int dirfd, const char *path, int flags) {
#ifdef SYS_openat2
    struct open_how how = { .flags = (unsigned long long)flags, .mode = 0,
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    errno = ENOSYS;
    return -1;
#endif
}
