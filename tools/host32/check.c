/* Smoke test for the i386 host build: every library coreq links, from the sysroot.
 * Build/run: tools/host32/sysroot.sh --check DEST  (or see README.md). */
#define PACKAGE "coreq-host32-check" /* bfd.h insists on config.h-style macros */
#define PACKAGE_VERSION "0"
#include <bfd.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <jansson.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("FAIL: " __VA_ARGS__);                                      \
            printf("\n");                                                      \
            failures++;                                                        \
        }                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/bin/ls";

    printf("sizeof(void*)=%zu sizeof(long)=%zu sizeof(off_t)=%zu sizeof(bfd_vma)=%zu\n",
           sizeof(void *), sizeof(long), sizeof(off_t), sizeof(bfd_vma));
    CHECK(sizeof(void *) == 4, "not a 32-bit build");
    CHECK(sizeof(off_t) == 8, "off_t is not 64-bit (-D_FILE_OFFSET_BITS=64 missing)");

    /* BFD (multiarch) */
    CHECK(bfd_init() == BFD_INIT_MAGIC, "bfd_init: header/library mismatch");
    bfd *abfd = bfd_openr(path, NULL);
    if (!abfd) {
        CHECK(0, "bfd_openr(%s): %s", path, bfd_errmsg(bfd_get_error()));
    } else {
        bool ok = bfd_check_format(abfd, bfd_object);
        printf("bfd: %s: check_format=%d target=%s arch=%s\n", path, ok,
               bfd_get_target(abfd), bfd_printable_name(abfd));
        CHECK(ok, "bfd_check_format: %s", bfd_errmsg(bfd_get_error()));
        bfd_close(abfd);
    }

    /* libelf + libdw */
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    GElf_Ehdr eh;
    if (elf && gelf_getehdr(elf, &eh)) {
        printf("libelf: e_machine=%u class=%d\n", eh.e_machine, gelf_getclass(elf));
    } else {
        CHECK(0, "libelf: %s", elf_errmsg(-1));
    }
    if (elf) {
        Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
        printf("libdw: dwarf_begin_elf=%s (%s)\n", dw ? "ok" : "NULL",
               dw ? "has DWARF" : dwarf_errmsg(-1));
        if (dw)
            dwarf_end(dw);
        elf_end(elf);
    }
    if (fd >= 0)
        close(fd);

    /* jansson */
    json_error_t jerr;
    json_t *j = json_loads("{\"arch\":\"i386\",\"bits\":[32,64]}", 0, &jerr);
    if (j) {
        char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        printf("jansson %s: %s bits[1]=%lld\n", JANSSON_VERSION, s,
               (long long)json_integer_value(json_array_get(json_object_get(j, "bits"), 1)));
        free(s);
        json_decref(j);
    } else {
        CHECK(0, "json_loads: %s", jerr.text);
    }

    /* zlib */
    printf("zlib: zlibVersion()=%s (header %s) crc32=%08lx\n", zlibVersion(), ZLIB_VERSION,
           crc32(0, (const Bytef *)"coreq", 5));
    CHECK(strcmp(zlibVersion(), ZLIB_VERSION) == 0, "zlib header/library mismatch");

    /* Large file: pread/pwrite beyond 4 GiB on a sparse file. */
    char tmpl[] = "/tmp/host32-sparse-XXXXXX";
    int sfd = mkstemp(tmpl);
    CHECK(sfd >= 0, "mkstemp");
    if (sfd >= 0) {
        unlink(tmpl);
        const off_t off = (off_t)5 << 30;
        char in[8] = {0};
        ssize_t w = pwrite(sfd, "coreq5G", 8, off);
        ssize_t r = pread(sfd, in, 8, off);
        printf("sparse: pwrite/pread at %lld (5 GiB): %zd/%zd \"%s\" file size %lld\n",
               (long long)off, w, r, in, (long long)lseek(sfd, 0, SEEK_END));
        CHECK(w == 8 && r == 8 && strcmp(in, "coreq5G") == 0, "5 GiB pread failed");
        close(sfd);
    }

    printf("%s\n", failures ? "FAILED" : "ALL OK");
    return failures ? 1 : 0;
}
