/* floor — the bare lower bound for `coreq info` on an ELF core: mmap the core, walk
 * the program headers and the notes in PT_NOTE segments, count NT_PRSTATUS. Nothing
 * else (no segment contents, no executable, no symbols). Handles ELF32/ELF64 of the
 * host's byte order (the benchmark cores are native).
 *
 *   floor CORE      prints "threads N  notes M  segments S  bytes-touched B"
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct walk { size_t threads, notes, touched; };

static int walk_notes(const unsigned char *p, size_t len, struct walk *w)
{
    size_t off = 0;
    while (off + sizeof(Elf64_Nhdr) <= len) {     /* Elf32_Nhdr == Elf64_Nhdr layout */
        const Elf64_Nhdr *n = (const void *)(p + off);
        size_t namesz = (n->n_namesz + 3u) & ~3u, descsz = (n->n_descsz + 3u) & ~3u;
        if (namesz > len - off - sizeof *n || descsz > len - off - sizeof *n - namesz)
            return -1;
        w->notes++;
        if (n->n_type == NT_PRSTATUS)
            w->threads++;
        off += sizeof *n + namesz + descsz;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: floor CORE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        perror(argv[1]);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);
    if (size < EI_NIDENT || memcmp(m, ELFMAG, SELFMAG)) {
        fprintf(stderr, "floor: not ELF\n");
        return 1;
    }
    struct walk w = { 0, 0, 0 };
    size_t nseg = 0;
    int is64 = m[EI_CLASS] == ELFCLASS64;
    uint64_t phoff;
    unsigned phnum, phentsize;
    if (is64) {
        const Elf64_Ehdr *eh = (const void *)m;
        phoff = eh->e_phoff; phnum = eh->e_phnum; phentsize = eh->e_phentsize;
    } else {
        const Elf32_Ehdr *eh = (const void *)m;
        phoff = eh->e_phoff; phnum = eh->e_phnum; phentsize = eh->e_phentsize;
    }
    if (phnum == PN_XNUM) {          /* > 65534 segments: real count in shdr[0].sh_info */
        uint64_t shoff = is64 ? ((const Elf64_Ehdr *)m)->e_shoff : ((const Elf32_Ehdr *)m)->e_shoff;
        phnum = is64 ? ((const Elf64_Shdr *)(m + shoff))->sh_info
                     : ((const Elf32_Shdr *)(m + shoff))->sh_info;
    }
    if (phoff > size || (uint64_t)phnum * phentsize > size - phoff) {
        fprintf(stderr, "floor: bad program headers\n");
        return 1;
    }
    w.touched = (size_t)phnum * phentsize;
    for (unsigned i = 0; i < phnum; i++) {
        const unsigned char *ph = m + phoff + (size_t)i * phentsize;
        uint32_t type = is64 ? ((const Elf64_Phdr *)ph)->p_type : ((const Elf32_Phdr *)ph)->p_type;
        uint64_t off = is64 ? ((const Elf64_Phdr *)ph)->p_offset : ((const Elf32_Phdr *)ph)->p_offset;
        uint64_t fsz = is64 ? ((const Elf64_Phdr *)ph)->p_filesz : ((const Elf32_Phdr *)ph)->p_filesz;
        if (type == PT_LOAD)
            nseg++;
        if (type != PT_NOTE)
            continue;
        if (off > size || fsz > size - off || walk_notes(m + off, fsz, &w)) {
            fprintf(stderr, "floor: bad PT_NOTE\n");
            return 1;
        }
        w.touched += fsz;
    }
    printf("threads %zu  notes %zu  segments %zu  bytes-touched %zu\n",
           w.threads, w.notes, nseg, w.touched + EI_NIDENT);
    return 0;
}
