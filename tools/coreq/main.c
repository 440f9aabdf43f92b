/* SPDX-License-Identifier: MIT */
/* coreq: post-mortem analyzer for Linux ELF cores of any architecture. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input/file.h"

#define COREQ_VERSION "0.1.0"

static const struct {
	const char *name;
	cq_command_fn fn;
	const char *synopsis;
} commands[] = {
	{"info", cq_cmd_info, "info CORE [EXE]            process, signal, threads, images"},
	{"threads", cq_cmd_threads, "threads CORE [EXE]         threads with all registers"},
	{"maps", cq_cmd_maps, "maps CORE [EXE]            segments and where their bytes come from"},
	{"sym", cq_cmd_sym, "sym CORE NAME              address (and value) of a symbol"},
	{"addr", cq_cmd_addr, "addr CORE ADDR             symbolize an address"},
	{"read", cq_cmd_read, "read CORE ADDR LEN         hexdump (or --as u8|u16|u32|u64|ptr|str)"},
	{"tls", cq_cmd_tls, "tls CORE NAME              address and value of a TLS variable per thread"},
	{"type", cq_cmd_type, "type CORE NAME [FIELD...]  size and field offsets of a type (DWARF, --types)"},
	{"ompd", cq_cmd_ompd, "ompd CORE [EXE]            OpenMP threads, tasks, parallel regions, ICVs (OMPD plugin)"},
	{"mqd", cq_cmd_mqd, "mqd CORE...                MPI message queues of a rank (MQD DLL); several:\n"
	 "                                   the job view (deadlocks, unmatched operations)"},
	{"events", cq_cmd_events, "events CORE [EXE]          last events of every thread (coreq's flight recorder)"},
	{"bt", cq_cmd_bt, "bt CORE [EXE] | --pid PID  backtrace of every thread, the crashing one first"},
	{"stacks", cq_cmd_stacks, "stacks CORE|BT.json|TREE.json...  the stacks of many processes as one\n"
	 "                                   prefix tree (STAT's view), tasks as ranges"},
	{"snapshot", cq_cmd_snapshot, "snapshot [-o DIR] PID...   running processes stopped, their stacks read, each written as a\n"
	 "                                   small core (DIR/core.PID) of the pages read, resumed"},
	{"bundle", cq_cmd_bundle, "bundle CORE [EXE] -o OUT   core + symbols and read-only data it needs, one file"},
	{"donor", cq_cmd_donor, "donor [--arch A] [-o DIR]  build an Open MPI type donor from installed MPI headers\n"
	 "                                   (mqd picks it: ~/.local/share/coreq/donors/)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: coreq COMMAND [OPTIONS] ARGS...\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  coreq %s\n", commands[i].synopsis);
	fprintf(f,
		"\nCORE: an ELF core, compressed too (gzip zlib zstd xz lz4), or an apport report\n"
		"(/var/crash/*.crash: its ExecutablePath is the executable when none is given)\n"
		"\noptions:\n"
		"  -j, --json                 JSON output (schemas: doc/json-schema.md)\n"
		"  -e, --exe EXE              the executable (also: second argument of info/threads/maps)\n"
		"  -s, --sysroot DIR          prefix for the absolute paths the core names\n"
		"  -L, --solib-search-path D  colon-separated directories searched by file name\n"
		"  -d, --debug-dir DIR        .build-id/xx/rest.debug and debuglink root\n"
		"  -t, --thread TID           tls: only this thread\n"
		"  -m, --module IMAGE         sym/tls: look only in this image (path or file name)\n"
		"  -a, --as FORMAT            read: u8 u16 u32 u64 ptr str hex\n"
		"      --types FILES          type donors: ELF files with DWARF for the target\n"
		"                             (colon-separated), after the images' own DWARF\n"
		"  -o, --output FILE          bundle: where to write (FILE.gz: compressed)\n"
		"      --symbols-only         bundle: symbols, unwind tables, type donors, no file data\n"
		"      --with-lines           bundle: line tables and inlined scopes for backtraces too\n"
		"      --ompd-plugin PATH     ompd: load this OMPD plugin (else: the runtime's\n"
		"                             ompd_dll_locations, from trusted directories only)\n"
		"      --ompd-trusted-dir DIRS  ompd: more trusted directories (colon-separated)\n"
		"      --ompd-allow-untrusted ompd: load a plugin the core names from anywhere\n"
		"      --mqd-plugin DLL       mqd: load this MQD DLL (else: the core's MPIR_dll_name,\n"
		"                             from trusted directories only)\n"
		"      --mqd-trusted-dir DIRS mqd: more trusted directories (colon-separated)\n"
		"      --mqd-allow-untrusted  mqd: load a DLL the core names from anywhere\n"
		"      --mqd-vendor           mqd: Open MPI 4.1: its own DLL, not coreq's (which shows\n"
		"                             the unexpected queue and serves any host)\n"
		"      --dot FILE, --svg FILE mqd job view: the wait-for graph; stacks: the tree (SVG\n"
		"                             needs graphviz)\n"
		"      --threads              stacks: every thread's stack (default: one per process,\n"
		"                             the crashing thread)\n"
		"      --by function|line|module  stacks: what a node is (default function; module+offset\n"
		"                             needs no symbols)\n"
		"      --workers N            mqd job view, stacks: cores analyzed in parallel (default: CPUs)\n"
		"      --last N               events: per thread (default 16; 0: all)\n"
		"      --max-frames N         bt: frames per thread (default 256)\n"
		"      --openmp[=continued]   bt: OpenMP-aware stacks through the OMPD plugin: each frame\n"
		"                             runtime, task or serial, the runtime's folded; continued:\n"
		"                             a task's generating tasks on their threads, out to main\n"
		"      --all-lines            bt: source lines in the C library and dynamic linker too\n"
		"                             (their DWARF is large: off by default)\n"
		"      --bfd                  info/threads: also libbfd's (multi-arch) names of the core's\n"
		"                             target and architecture (loads libbfd: a few ms)\n"
		"      --arch ARCH            donor: the target (default: the host's); its headers are\n"
		"                             SYSROOT/usr/lib/<multiarch>/openmpi/include (--sysroot)\n"
		"      --mpi-include DIR      donor: Open MPI's include directory (holds mpi.h)\n"
		"      --libmpi FILE          donor: the libmpi.so.40 of those headers (its build-id)\n"
		"      --cc CC                donor: the compiler (default cc, or <triplet>-gcc)\n"
		"      --ompi-source DIR      donor: Open MPI's source tree of the same version (apt-get\n"
		"                             source openmpi): the ob1 types too (the unexpected queue)\n"
		"      --plugin-timeout SECS  time limit of a plugin run (default 20)\n"
		"      --svg-timeout SECS     time limit of graphviz's dot for --svg (default 60)\n"
		"      --pid PID              bt: a running process instead of a core: every thread stopped\n"
		"                             (PTRACE_SEIZE + INTERRUPT: no signal sent, though a wait such\n"
		"                             as epoll_wait returns EINTR, as under gdb -p), read, resumed\n"
		"                             as it was; only a process you may trace\n"
		"      --max-stop MS          --pid, snapshot: the longest a process stays stopped (default\n"
		"                             3000); then it is resumed and what was not read yet is said;\n"
		"                             a watchdog holds it even when coreq itself is stopped\n"
		"      --job                  snapshot: every rank of the MPI job PID belongs to (its\n"
		"                             launcher's children with a rank in their environment), all\n"
		"                             stopped first, then read, then resumed: DIR/rankR.core\n"
		"      --samples N            snapshot: N samples (DIR/sample1, ...), --interval MS apart\n"
		"                             (default 1000); says per process whether its stacks moved\n"
		"                             between them (progressing) or not (stuck); stacks and the\n"
		"                             mqd job view given DIR/sample*/... say it too\n"
		"      --interval MS          snapshot --samples: the time between samples\n"
		"      --slurm JOB[.STEP]     snapshot: the Slurm job's ranks on every node of it: one coreq\n"
		"                             per node inside the allocation (srun --overlap), all holding\n"
		"                             their ranks until every node has read (one cut), one core per\n"
		"                             rank in DIR (sent back through srun where DIR is not shared),\n"
		"                             then the job view's verdict. JOB: every step's ranks (mpirun\n"
		"                             inside sbatch); JOB.STEP: that step's (srun --mpi=pmix)\n"
		"      --allow-non-dumpable   snapshot: also a process the kernel would write no core of\n"
		"                             (PR_SET_DUMPABLE 0, a setuid program; refused without it)\n"
		"      --max-inflate BYTES    bound on a compressed core's (or report's) expanded size\n"
		"                             (default 4 GiB)\n"
		"  -h, --help                 this help;  -V, --version  version\n"
		"\nenvironment: DEBUGINFOD_URLS: servers that send missing executables, libraries and\n"
		"debug files by build-id (DEBUGINFOD_CACHE_PATH, its cache; unset: nothing fetched)\n"
		"\nexit status: 0 ok, 1 done with missing pieces (listed), 2 usage, 3 cannot read input\n"
		"or write the output,\n"
		"4 not a core / unsupported architecture, 5 malformed core, 6 bad compressed input,\n"
		"7 item not answerable (symbol, address, thread), 8 internal error,\n"
		"9 debugger plugin missing, untrusted or unusable; mqd job view: 10 deadlock,\n"
		"11 possible deadlock (a cycle resting on a guess, named); 12 a process cannot be traced\n"
		"or held; 13 --slurm: no such job, not running, no rank, a node that failed\n");
}

/* Output errors are errors: a full disk or a closed pipe on stdout leaves a truncated
 * document, which a per-rank pipeline would merge as if whole. Every write is checked at
 * once here, by the stream's error flag and the final flush: exit 3, said on stderr. */
static int output_written(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "coreq: writing the output failed (%s): what was written is incomplete\n",
		errno ? strerror(errno) : "write error");
	return CQ_EXIT_IO;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"exe", required_argument, NULL, 'e'},
		{"sysroot", required_argument, NULL, 's'},
		{"solib-search-path", required_argument, NULL, 'L'},
		{"debug-dir", required_argument, NULL, 'd'},
		{"thread", required_argument, NULL, 't'},
		{"module", required_argument, NULL, 'm'},
		{"as", required_argument, NULL, 'a'},
		{"max-inflate", required_argument, NULL, 'M'},
		{"output", required_argument, NULL, 'o'},
		{"ompd-plugin", required_argument, NULL, 'P'},
		{"ompd-trusted-dir", required_argument, NULL, 'T'},
		{"ompd-allow-untrusted", no_argument, NULL, 'U'},
		{"plugin-timeout", required_argument, NULL, 'W'},
		{"svg-timeout", required_argument, NULL, 305},
		{"pid", required_argument, NULL, 306},
		{"max-stop", required_argument, NULL, 307},
		{"job", no_argument, NULL, 308},
		{"samples", required_argument, NULL, 309},
		{"interval", required_argument, NULL, 310},
		{"allow-non-dumpable", no_argument, NULL, 311},
		{"slurm", required_argument, NULL, 312},
		{"slurm-node", required_argument, NULL, 313},
		{"slurm-dir", required_argument, NULL, 314},
		{"slurm-token", required_argument, NULL, 315},
		{"types", required_argument, NULL, 'Y'},
		{"mqd-plugin", required_argument, NULL, 'Q'},
		{"mqd-trusted-dir", required_argument, NULL, 'R'},
		{"mqd-allow-untrusted", no_argument, NULL, 'S'},
		{"mqd-vendor", no_argument, NULL, 'N'},
		{"dot", required_argument, NULL, 'D'},
		{"svg", required_argument, NULL, 'G'},
		{"workers", required_argument, NULL, 'K'},
		{"symbols-only", no_argument, NULL, 'O'},
		{"with-lines", no_argument, NULL, 'I'},
		{"last", required_argument, NULL, 'X'},
		{"max-frames", required_argument, NULL, 'F'},
		{"all-lines", no_argument, NULL, 'A'},
		{"bfd", no_argument, NULL, 'B'},
		{"threads", no_argument, NULL, 'H'},
		{"by", required_argument, NULL, 'y'},
		{"openmp", optional_argument, NULL, 'u'},
		{"arch", required_argument, NULL, 300},
		{"mpi-include", required_argument, NULL, 301},
		{"libmpi", required_argument, NULL, 302},
		{"cc", required_argument, NULL, 303},
		{"ompi-source", required_argument, NULL, 304},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct cq_cli cli = {.interval_ms = 1000};
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "je:s:L:d:t:m:a:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': cli.json = true; break;
		case 'A': cli.all_lines = true; break;
		case 'B': cli.bfd = true; break;
		case 'H': cli.all_threads = true; break;
		case 'u':
			if (!optarg)
				cli.openmp = 1;
			else if (!strcmp(optarg, "continued"))
				cli.openmp = 2;
			else {
				fprintf(stderr, "coreq: bad --openmp=%s (only --openmp or --openmp=continued)\n", cq_esc(optarg));
				return CQ_EXIT_USAGE;
			}
			break;
		case 'y':
			if (!strcmp(optarg, "function"))
				cli.tree_by = CQ_TREE_BY_FUNCTION;
			else if (!strcmp(optarg, "line"))
				cli.tree_by = CQ_TREE_BY_LINE;
			else if (!strcmp(optarg, "module"))
				cli.tree_by = CQ_TREE_BY_MODULE;
			else {
				fprintf(stderr, "coreq: bad --by %s (function, line or module)\n", cq_esc(optarg));
				return CQ_EXIT_USAGE;
			}
			break;
		case 'F':
			if (!cq_parse_u64(optarg, &v) || !v || v > 100000) {
				fprintf(stderr, "coreq: bad --max-frames %s (1..100000)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.max_frames = (unsigned)v;
			break;
		case 'e': cli.opts.exe = optarg; break;
		case 's': cli.opts.sysroot = optarg; break;
		case 'L': cli.opts.solib_search_path = optarg; break;
		case 'd': cli.opts.debug_dir = optarg; break;
		case 'm': cli.module = optarg; break;
		case 'a': cli.as = optarg; break;
		case 'o': cli.output = optarg; break;
		case 'P': cli.ompd.plugin = optarg; break;
		case 'T': cli.ompd.trusted_dirs = optarg; break;
		case 'U': cli.ompd.allow_untrusted = true; break;
		case 'Y': cli.opts.type_donors = optarg; break;
		case 'Q': cli.mqd.dll = optarg; break;
		case 'R': cli.mqd.trusted_dirs = optarg; break;
		case 'S': cli.mqd.allow_untrusted = true; break;
		case 'N': cli.mqd.vendor = true; break;
		case 'D': cli.dot = optarg; break;
		case 'O': cli.symbols_only = true; break;
		case 'I': cli.with_lines = true; break;
		case 'X':
			if (!cq_parse_u64(optarg, &v) || v > (1u << 20)) {
				fprintf(stderr, "coreq: bad --last %s (0: all, up to 1048576)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.last = v ? (unsigned)v : (1u << 20);
			break;
		case 'G': cli.svg = optarg; break;
		case 'K':
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > 1024) {
				fprintf(stderr, "coreq: bad --workers %s (1..1024)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.workers = (int)v;
			break;
		case 'W':
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > 3600) {
				fprintf(stderr, "coreq: bad --plugin-timeout %s (seconds, 1..3600)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.ompd.timeout_ms = (unsigned)v * 1000;
			cli.mqd.timeout_ms = (unsigned)v * 1000;
			break;
		case 't':
			if (!cq_parse_u64(optarg, &v) || v > INT32_MAX) {
				fprintf(stderr, "coreq: bad --thread %s\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.has_thread = true;
			cli.thread = (int32_t)v;
			break;
		case 'M':
			if (!cq_parse_u64(optarg, &v) || v == 0) {
				fprintf(stderr, "coreq: bad --max-inflate %s\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.opts.max_inflated = v;
			cq_file_set_max_inflated(v); /* every compressed input, not only the core */
			break;
		case 300: cli.donor_arch = optarg; break;
		case 301: cli.donor_mpi_include = optarg; break;
		case 302: cli.donor_libmpi = optarg; break;
		case 303: cli.donor_cc = optarg; break;
		case 304: cli.donor_ompi_source = optarg; break;
		case 305:
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > 3600) {
				fprintf(stderr, "coreq: bad --svg-timeout %s (seconds, 1..3600)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.svg_timeout_s = (unsigned)v;
			break;
		case 306:
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > INT32_MAX) {
				fprintf(stderr, "coreq: bad --pid %s (a process id)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.pid = (int)v;
			break;
		case 307:
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > 600000) {
				fprintf(stderr, "coreq: bad --max-stop %s (milliseconds, 1..600000)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.live.max_stop_ms = (unsigned)v;
			break;
		case 308: cli.job = true; break;
		case 309:
			if (!cq_parse_u64(optarg, &v) || v == 0 || v > 1000) {
				fprintf(stderr, "coreq: bad --samples %s (1..1000)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.samples = (unsigned)v;
			break;
		case 310:
			if (!cq_parse_u64(optarg, &v) || v > 3600000) {
				fprintf(stderr, "coreq: bad --interval %s (milliseconds, 0..3600000)\n", optarg);
				return CQ_EXIT_USAGE;
			}
			cli.interval_ms = (unsigned)v;
			break;
		case 311: cli.allow_nondumpable = true; break;
		case 312: cli.slurm = optarg; break;
		case 313: cli.slurm_node = optarg; break;
		case 314: cli.slurm_dir = optarg; break;
		case 315: cli.slurm_token = optarg; break;
		case 'h': usage(stdout); return CQ_EXIT_OK;
		case 'V': printf("coreq %s\n", COREQ_VERSION); return CQ_EXIT_OK;
		default: usage(stderr); return CQ_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CQ_EXIT_USAGE;
	}
	const char *cmd = argv[optind];
	cli.args = argv + optind + 1;
	cli.nargs = argc - optind - 1;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, cmd) == 0)
			return output_written(commands[i].fn(&cli));
	fprintf(stderr, "coreq: unknown command '%s' (see coreq --help)\n", cmd);
	return CQ_EXIT_USAGE;
}
