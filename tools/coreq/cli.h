/* SPDX-License-Identifier: MIT */
/**
 * @file cli.h
 * The `coreq` command line: shared state of one invocation and output helpers.
 * Every command builds one JSON document (jansson, insertion order kept, so output
 * order is stable); text output is rendered from the same data.
 */
#ifndef COREQ_CLI_H
#define COREQ_CLI_H

#include "job/tree.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "corelib/core.h"
#include "analysis/btdoc.h"
#include "analysis/crash.h"
#include "analysis/mpiargs.h"
#include "analysis/rank.h"
#include "corelib/image.h"
#include "elf/bfd_ident.h"
#include "live/process.h"
#include "base/text.h"
#include "ompd/host.h"
#include "mqd/host.h"
#include "stack/stack.h"

/** Exit statuses (documented in coreq(1) and README). */
enum cq_exit {
	CQ_EXIT_OK = 0,          /**< complete answer */
	CQ_EXIT_PARTIAL = 1,     /**< answer given, with missing pieces listed as problems */
	CQ_EXIT_USAGE = 2,       /**< bad command line */
	CQ_EXIT_IO = 3,          /**< an input file cannot be opened or read, or the output not written */
	CQ_EXIT_FORMAT = 4,      /**< input is not a core or its architecture is unsupported */
	CQ_EXIT_MALFORMED = 5,   /**< the core is truncated or structurally broken */
	CQ_EXIT_COMPRESSED = 6,  /**< corrupt compressed input or expansion over the limit */
	CQ_EXIT_QUERY = 7,       /**< the requested item cannot be answered (symbol, address) */
	CQ_EXIT_INTERNAL = 8,    /**< out of memory or a library failed */
	CQ_EXIT_PLUGIN = 9,      /**< debugger plugin missing, refused (untrusted) or unusable */
	CQ_EXIT_DEADLOCK = 10,   /**< mqd job view: a deadlock cycle of definite waits */
	CQ_EXIT_POSSIBLE_DEADLOCK = 11, /**< mqd job view: a cycle only waits resting on a guess close */
	CQ_EXIT_PROCESS = 12,    /**< --pid: the process cannot be traced (not yours, Yama, traced already)
	                              or was held past --max-stop; snapshot: not dumpable, or its
	                              memory could not be read (none of its stacks) */
	CQ_EXIT_JOB = 13,        /**< --slurm: the job does not exist or has ended, has no MPI rank, or
	                              a node's coreq failed or did not answer (the rest reported) */
};

struct cq_cli {
	struct cq_core_options opts;
	bool json;
	bool has_thread;
	int32_t thread;
	const char *as;      /**< read/tls value format: u8 u16 u32 u64 ptr str hex */
	const char *module;  /**< scope for sym/tls */
	const char *output;  /**< bundle: output path */
	bool symbols_only;   /**< bundle: no file-backed data */
	bool with_lines;     /**< bundle: line DWARF in the unwind ELFs */
	struct cq_ompd_options ompd;
	struct cq_mqd_options mqd;
	const char *dot, *svg; /**< mqd job view: graph files */
	unsigned svg_timeout_s; /**< --svg-timeout: graphviz's time limit (0: the default) */
	int workers;         /**< mqd job view: processes for the per-rank phase (0: CPUs) */
	unsigned last;       /**< events: per thread (0: default) */
	unsigned max_frames; /**< bt: frames per thread (0: default) */
	bool all_lines;      /**< bt: source lines in system modules too */
	bool bfd;            /**< info/threads: libbfd's identification too (--bfd) */
	struct cq_bfd_ident bfd_id; /**< with bfd: its answer (cq_open_core; the command frees it) */
	int pid;             /**< --pid: a live process instead of a core (live/process.h) */
	struct cq_live_options live; /**< --max-stop */
	bool job;            /**< snapshot --job: the ranks of the process's MPI job */
	bool allow_nondumpable; /**< snapshot --allow-non-dumpable: a core the kernel would not write */
	unsigned samples;    /**< snapshot --samples N (0: one) */
	unsigned interval_ms; /**< snapshot --interval MS between samples (default 1000) */
	const char *slurm;   /**< snapshot --slurm JOB[.STEP]: the job's every node (cmd_slurm.c) */
	/** The per-node side of --slurm, as the front end starts it through srun (internal):
	 * the job, the front end's DIR (written into directly when this node sees it: the token
	 * file is there), the token. */
	const char *slurm_node, *slurm_dir, *slurm_token;
	int openmp;          /**< bt: 1 OpenMP-aware stacks (--openmp), 2 continued (--openmp=continued) */
	bool all_threads;    /**< stacks: every thread's stack, not one per process */
	enum cq_tree_label tree_by; /**< stacks: node labels (--by) */
	bool regs;           /**< threads: include all registers (default for `threads`) */
	/** donor: the target (--arch), Open MPI headers (--mpi-include), the target's libmpi
	 * (--libmpi), the compiler (--cc) */
	const char *donor_arch, *donor_mpi_include, *donor_libmpi, *donor_cc;
	const char *donor_ompi_source; /**< donor: Open MPI's source tree, for the ob1 types */
	char **args;         /**< positional arguments after the command */
	int nargs;
};

typedef int (*cq_command_fn)(struct cq_cli *cli);

/**
 * @p s escaped for a text report or a terminal (base/text.h: controls, newlines,
 * invalid UTF-8 shown as escapes), for printf's %s. The result stays valid for the next
 * 15 calls (the CLI prints a line at a time, single-threaded); "(null)" never appears: NULL
 * gives "-".
 */
const char *cq_esc(const char *s);

int cq_cmd_info(struct cq_cli *cli);
int cq_cmd_threads(struct cq_cli *cli);
int cq_cmd_maps(struct cq_cli *cli);
int cq_cmd_sym(struct cq_cli *cli);
int cq_cmd_addr(struct cq_cli *cli);
int cq_cmd_read(struct cq_cli *cli);
int cq_cmd_tls(struct cq_cli *cli);
int cq_cmd_type(struct cq_cli *cli);
int cq_cmd_bundle(struct cq_cli *cli);
int cq_cmd_ompd(struct cq_cli *cli);
int cq_cmd_mqd(struct cq_cli *cli);
int cq_cmd_events(struct cq_cli *cli);
int cq_cmd_bt(struct cq_cli *cli);
int cq_cmd_snapshot(struct cq_cli *cli);
/** coreq snapshot --slurm JOB[.STEP] (cmd_slurm.c): the front end. */
int cq_cmd_snapshot_slurm(struct cq_cli *cli);
/** coreq snapshot --slurm-node JOB[.STEP] (cmd_snapshot.c): one node's side of it. */
int cq_cmd_snapshot_node(struct cq_cli *cli);
/** coreq mqd|stacks --slurm JOB PATTERN... (cmd_slurm.c): the files that match PATTERN on
 * each node of the job (a crashed job's cores on local disks), their documents made there
 * (@p what: "mqd", one per core; "stacks", the node's tree) and sent back, then merged here
 * (the job view; the tree), as `coreq mqd|stacks DOCS...` would. */
int cq_cmd_slurm_gather(struct cq_cli *cli, const char *what);
/** The options a node's coreq (and, with @p merge, the merge of what the nodes sent: --json,
 * --dot, --svg) takes from this one's (--types, --mqd-plugin, --mqd-trusted-dir, --threads)
 * into @p argv from argv[*@p n] on: 9 slots at most (cmd_slurm.c). */
void cq_slurm_pass_options(const struct cq_cli *cli, char **argv, size_t *n, bool merge);
/** The directory of sample @p k (from 1) of @p n (snapshot --samples, cmd_snapshot.c):
 * "sample1".., the numbers as wide as the last (sample01 ... sample12: DIR/sample* lists
 * them in order); what a node writes and the front end reads must agree. */
void cq_sample_dir_name(unsigned k, unsigned n, char *buf, size_t size);

/** Its side on one node (--slurm-node). */
int cq_cmd_slurm_docs(struct cq_cli *cli, const char *what);
int cq_cmd_stacks(struct cq_cli *cli);
int cq_cmd_donor(struct cq_cli *cli);

/** Text lines of one thread's events (cmd_events.c), each line starting with @p indent. */
void cq_events_print_thread(json_t *ring, const char *indent);

/** Text report of one rank's "coreq-mqd/1" document (cmd_mqd.c). */
void cq_mqd_print_rank(json_t *doc);


/** Exit status for an error code. */
int cq_exit_for(const struct cq_error *err);

/** Print "coreq: MESSAGE" to stderr, destroy @p err, return its exit status. */
int cq_fail(struct cq_error *err);

/** Open the core named by args[0] (EXE from args[1] when @p exe_arg). Prints on failure. */
int cq_open_core(struct cq_cli *cli, bool exe_arg, struct cq_core **ret);

/** Whether @p path is an ELF file other than a core (an executable or library; compressed
 * ones too), so that `coreq mqd CORE EXE` takes EXE as the executable. */
bool cq_is_executable(const char *path);

/** Add to @p doc "apport" (doc/json-schema.md) when @p core came out of an apport report
 * (input/apport.h): its fields, kept as written (cq_json_str), and whether its
 * ExecutablePath stood in for the executable. Nothing for any other core. */
void cq_json_add_apport(json_t *doc, const struct cq_core *core);

/** The core came from an apport report whose ExecutablePath is looked up as the
 * executable: no executable was given (corelib/image.c). */
bool cq_apport_exe_used(const struct cq_core *core);

/** "0x..." string for an address. */
json_t *cq_json_addr(uint64_t v);

/**
 * The end of a command that built @p doc (may be NULL) from @p core: both are left for the
 * process's exit to release (freeing a backtrace's JSON and the core's tables block by
 * block was a tenth of `coreq bt`); nothing they hold needs more than that (temporary
 * files are unlinked when made). Built with AddressSanitizer, they are freed here, so that
 * its leak check still covers every block.
 */
void cq_release(json_t *doc, struct cq_core *core);

/** "PREFIXrank 2 of 4 (OMPI_COMM_WORLD_RANK, in MPI_COMM_WORLD)" for cq_mpi_rank_json's
 * @p r; nothing for NULL. */
void cq_print_mpi_rank(const json_t *r, const char *prefix);

/** An OpenMP-aware stack (job/ompjoin.h: a thread of a joined bt document @p bt) as text:
 * the runtime's frames folded to a line, each task's under a heading, then the frames it
 * continues with on other threads. @p width: hex digits of a pointer. */
void cq_print_omp_stack(json_t *bt, json_t *thread, int width);

/** Per-process documents larger than this are not read (a rank of many communicators
 * and long queues is a few MB; the bound keeps a hostile file from costing gigabytes). */
#define MAX_DOC_BYTES (256u << 20)

/** Whether @p path names a JSON document (".json") rather than a core. */
bool cq_is_json_input(const char *path);

/** A JSON document the user gave: a regular file (a FIFO would block) of at most
 * MAX_DOC_BYTES. NULL with *@p why_ret (caller frees) when it cannot be read or parsed. */
json_t *cq_load_doc(const char *path, char **why_ret);

/** The graph @p text (DOT; freed here, NULL: out of memory) to cli->dot, and as SVG through
 * graphviz's dot to cli->svg. Both are outputs (output/output.h): refused when they name
 * an input of this run, written beside their name and renamed. An exit status. */
int cq_write_graph(struct cq_cli *cli, char *text);

/** Parse a number (decimal or 0x hex); false if invalid. */
bool cq_parse_u64(const char *s, uint64_t *ret);

/** Emit @p doc as JSON to stdout (steals the reference). */
void cq_emit_json(json_t *doc);

/** cq_emit_json() for a document whose array member @p key (set here) has @p n items made
 * one at a time by @p item (a new reference each, or NULL for null), each written and
 * freed before the next: the same text, without the whole array in memory (a core's
 * 100,000 threads as JSON objects took 1.9 GB at once). Steals @p doc. */
void cq_emit_json_items(json_t *doc, const char *key, size_t n, json_t *(*item)(size_t i, void *arg), void *arg);

/** Prints a coreq-bt/2 frames array, one line per frame; pcs @p width hex digits wide. */
void cq_print_frames(json_t *frames, int width);

/** @p v in decimal to stdout, left-aligned in @p width columns (printf's "%-*lld"). */
void cq_put_dec(long long v, int width);

/** The same lines from a walk's frames (stack/stack.h). */
void cq_print_stack_frames(const struct cq_frame *frames, unsigned n, int width);

/** Print problems to stdout in text form; returns CQ_EXIT_PARTIAL if any, else OK. */
int cq_text_problems(const struct cq_core *core);


#endif
