# common.smk - config validation and the functions the rules share (no rules here).

import difflib
import gzip
import json
import re
import shlex
import shutil
import subprocess
import sys

import yaml
from snakemake.utils import validate

# ---- the config: the run's own for `snakemake --report`, then checked -------------------

# `snakemake --report FILE` without --configfile describes the last run (the config its
# figures job recorded), not the default config
RUN_CONFIG = "results/report/run-config.json"
REPORT_MODE = any(a == "--report" or a.startswith("--report=") for a in sys.argv)
LINT_MODE = "--lint" in sys.argv
if REPORT_MODE and not workflow.config_settings.configfiles and os.path.exists(RUN_CONFIG):
    with open(RUN_CONFIG) as _f:
        _recorded = json.load(_f)
    config.clear()
    config.update(_recorded)
    logger.info(f"haplik workflow: the report of the last run, with its config ({RUN_CONFIG})")

with open(os.path.join(workflow.basedir, "schemas", "config.schema.yaml")) as _f:
    SCHEMA = yaml.safe_load(_f)


def _check_config_shape(value, schema, where):
    """What the schema cannot say, or says in 500 lines: a key that is not one (one line, the
    nearest key), and a whole number where an integer belongs (JSON Schema takes 2.0 for an
    integer; Python does not), a single value where a number belongs (not a list)."""
    props = schema.get("properties")
    if isinstance(value, dict) and props:
        for key in value:
            if key not in props:
                near = difflib.get_close_matches(str(key), list(props), n=1)
                hint = f" (did you mean `{where}{near[0]}`?)" if near else ""
                raise WorkflowError(
                    f"haplik workflow: config: {where}{key}: no such key{hint}; "
                    f"the keys{f' of {where[:-1]}' if where else ''}: {', '.join(props)}"
                )
        for key, sub in props.items():
            if key in value and value[key] is not None:
                _check_config_shape(value[key], sub, f"{where}{key}.")
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    name = where.rstrip(".")
    if "integer" in types and (isinstance(value, float) or isinstance(value, bool)):
        raise WorkflowError(
            f"haplik workflow: config: {name}: {value!r} is not an integer (write it without a point)"
        )
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check_config_shape(item, schema["items"], f"{where[:-1]}[{i}].")
    for alt in schema.get("oneOf", []):
        if isinstance(value, list) and alt.get("type") == "array":
            _check_config_shape(value, alt, where)


_check_config_shape(config, SCHEMA, "")
# jsonschema's most relevant error in one line, not validate()'s schema and config after it
import jsonschema  # noqa: E402 (Snakemake's own dependency)

_error = jsonschema.exceptions.best_match(
    jsonschema.Draft202012Validator(SCHEMA).iter_errors(dict(config))
)
if _error is not None:
    _where = ".".join(str(k) for k in _error.absolute_path) or "config"
    raise WorkflowError(f"haplik workflow: config: {_where}: {_error.message}")
validate(config, schema="../schemas/config.schema.yaml")  # and the defaults

# ---- mode, shards and names ----------------------------------------------------------

GENOME_MODE = bool(config.get("genome"))
GENOME_DEFAULTS = {
    "window": 100000,
    "extra": "",
    "java_options": "-Xmx4g",
    "threads": 2,
    "mem_mb": 6000,
    "pair_hmm": "gkl",
}
if GENOME_MODE:
    for _key, _value in GENOME_DEFAULTS.items():
        config["genome"].setdefault(_key, _value)
N_SHARDS = config["shards"]
# haplik writes zero-padded shard numbers, at least 4 digits (haplik shard's OUTPREFIX0001.bed)
SHARD_IDS = [f"{k:0{max(4, len(str(N_SHARDS)))}d}" for k in range(1, N_SHARDS + 1)]


def _dump_names(paths):
    """A wildcard-safe, unique name per dump, from its file name, in the order given."""
    names = []
    for path in paths:
        stem = os.path.basename(path.rstrip("/"))
        stem = re.sub(r"\.(gz|bgz|bgzf)$", "", stem)
        while re.search(r"\.(txt|in|dump|hmmresults|tsv)$", stem):
            stem = re.sub(r"\.(txt|in|dump|hmmresults|tsv)$", "", stem)
        # letters of any script stay (échantillon), other runs of characters become one _
        stem = re.sub(r"[^\w.-]+", "_", stem).strip("._") or "dump"
        name, k = stem, 2
        while name in names:
            name, k = f"{stem}_{k}", k + 1
        names.append(name)
    return names


def _user_set(key):
    """Whether the run's own config (--configfile, --config) sets key, not the default."""
    return key in workflow.config_settings.overwrite_config


if GENOME_MODE:
    if config.get("dumps") and _user_set("dumps"):
        logger.warning(
            "haplik workflow: `genome` is set, so the genome mode runs and `dumps` "
            "is ignored (set `dumps: []` to silence this)"
        )
    DUMPS = {"genome": None}
else:
    if not config.get("dumps"):
        raise WorkflowError(
            "haplik workflow: nothing to do: set `dumps` (a list of dump files) or `genome` "
            "(reference and BAMs) in the config"
        )
    _seen = {}
    for _k, _path in enumerate(config["dumps"]):
        _real = os.path.realpath(_path)
        if _real in _seen:
            raise WorkflowError(
                f"haplik workflow: dumps: {_path} (entry {_k + 1}) is the dump of entry "
                f"{_seen[_real] + 1} again; each dump is scored once: list it once"
            )
        _seen[_real] = _k
    DUMPS = dict(zip(_dump_names(config["dumps"]), config["dumps"]))


wildcard_constraints:
    dump="|".join(re.escape(d) for d in DUMPS),
    shard=r"[0-9]+",


# ---- haplik --------------------------------------------------------------------------


def _haplik_path():
    """config `haplik`, else `haplik` on PATH, else ./haplik (an in-tree build); absolute,
    so that cluster jobs run the same binary."""
    exe = config.get("haplik")
    if exe:
        found = shutil.which(exe)
        return os.path.abspath(found) if found else exe
    found = shutil.which("haplik")
    if found:
        return os.path.abspath(found)
    if os.access("haplik", os.X_OK):
        return os.path.abspath("haplik")
    return "haplik"


HAPLIK = _haplik_path()


# haplik's flags are its configuration keys' last part with "-" for "_" (haplik score
# --help lists them), but for the two formats.
FLAG_OF_KEY = {"input.format": "format", "output.format": "output-format"}
# keys the workflow sets itself
OWN_KEYS = {
    "engine.backend": "scoring.backend",
    "engine.devices": "scoring.devices",
    "engine.gpu_lock_dir": "scoring.gpu_lock_dir",
    "engine.threads": "scoring.threads",
    "output.format": "output_format",
    "output.compression": "output_format",
}


def _haplik_keys():
    """haplik's own configuration keys ({"input.format", ...}) from `haplik score
    --print-config`, or None when haplik cannot be run here (a conda environment that
    provides it is made later)."""
    try:
        out = subprocess.run(
            [HAPLIK, "score", "--print-config"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    try:
        table = json.loads(out.stdout)
    except ValueError:
        return None
    return {f"{section}.{key}" for section, values in table.items() for key in values}


def _check_haplik_config():
    """Refuse, before any job runs, a `haplik_config` key haplik does not have, a key the
    workflow sets itself, or a value haplik refuses (haplik's own message)."""
    given = config.get("haplik_config") or {}
    for section, values in given.items():
        if not isinstance(values, dict):
            raise WorkflowError(
                f"haplik workflow: haplik_config.{section}: expected a section of keys "
                f"(e.g. haplik_config: {{model: {{precision: double}}}})"
            )
        for key in values:
            path = f"{section}.{key}"
            if path in OWN_KEYS:
                raise WorkflowError(
                    f"haplik workflow: haplik_config.{path}: set by the workflow; "
                    f"use `{OWN_KEYS[path]}` instead"
                )
    for section, values in given.items():
        for key, value in values.items():
            if isinstance(value, (list, dict)):
                raise WorkflowError(
                    f"haplik workflow: haplik_config.{section}.{key}: {value!r}: expected one "
                    "value (a number, a word, true, false or null), not a list or a mapping"
                )
    known = _haplik_keys()
    if known is None:
        found = os.path.isfile(HAPLIK) and os.access(HAPLIK, os.X_OK)
        uses_conda = "CONDA" in {str(getattr(m, "name", m)).upper() for m in
                            workflow.deployment_settings.deployment_method}
        if (not found or not uses_conda) and not LINT_MODE:
            # no conda environment provides haplik itself (workflow/envs/haplik.yaml: its libraries)
            why = (
                "no such executable (config `haplik`, else `haplik` on PATH, else ./haplik "
                "of an in-tree build; none found)"
                if not found
                else f"cannot be run here (`{HAPLIK} score --print-config` failed)"
            )
            raise WorkflowError(f"haplik workflow: haplik: {HAPLIK}: {why}")
        logger.warning(
            f"haplik workflow: cannot run {HAPLIK} score --print-config here: "
            "haplik_config is checked by the scoring jobs only (in their conda environment)"
        )
        return
    for section, values in given.items():
        for key in values:
            if f"{section}.{key}" not in known:
                raise WorkflowError(
                    f"haplik workflow: haplik_config.{section}.{key}: haplik has no such key "
                    f"(its keys: {', '.join(sorted(known))})"
                )
    out = subprocess.run(
        [HAPLIK, "score", "--print-config", *get_haplik_flags()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if out.returncode != 0:
        raise WorkflowError(
            f"haplik workflow: haplik_config: {out.stderr.strip() or 'refused by haplik'}"
        )


def get_haplik_flags():
    """haplik's flags for the scoring jobs, from config `haplik_config` (any haplik key)
    and the scoring settings; the GPU lock folder is added by the job (rules/score.smk).
    """
    keys = {
        f"{section}.{key}": value
        for section, values in (config.get("haplik_config") or {}).items()
        for key, value in values.items()
    }
    keys["engine.backend"] = config["scoring"]["backend"]
    keys["engine.devices"] = config["scoring"]["devices"]
    if TABLE_EXT != "json":
        keys["output.format"] = TABLE_EXT
    keys.pop("engine.gpu_lock_dir", None)
    flags = []
    for key, value in sorted(keys.items()):
        flag = FLAG_OF_KEY.get(key, key.split(".")[1].replace("_", "-"))
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif value is None:
            text = "null"
        elif isinstance(value, list):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
        flags += [f"--{flag}", text]
    return flags


def get_gpu_lock_dir():
    """config scoring.gpu_lock_dir as an absolute path, or "" for none (also for the CPU
    backend, which claims no GPU: a lock folder it cannot make must not fail its jobs)."""
    if config["scoring"]["backend"] == "cpu":
        return ""
    lock_dir = config["scoring"].get("gpu_lock_dir")
    return os.path.abspath(lock_dir) if lock_dir else ""


# ---- inputs --------------------------------------------------------------------------


def get_dump(wildcards):
    """The dump file `dump` names (dumps mode)."""
    return DUMPS[wildcards.dump]


def _compressed(path):
    """Whether a dump is gzip or BGZF (its first two bytes). Unreadable: no (Snakemake
    reports it missing)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


# Dumps mode in shards: a plain dump's shards are read in place (haplik split --plan,
# score --plan --part: no copy of the dump); a compressed one cannot be read from the
# middle, so it is cut into shard files by haplik split, as before.
IN_PLACE = {
    d: not GENOME_MODE and N_SHARDS > 1 and not _compressed(p) for d, p in DUMPS.items()
}
SPLIT = [d for d in DUMPS if not GENOME_MODE and N_SHARDS > 1 and not IN_PLACE[d]]


def get_split_dump(wildcards):
    return DUMPS[wildcards.dump]


def get_dump_stamp(wildcards):
    """The dump's size, modification and change times: a param of the rules that plan or cut
    it, so that a dump rewritten with its old modification time (which Snakemake alone would
    take for unchanged) is planned again (rerun-triggers: params)."""
    try:
        st = os.stat(DUMPS[wildcards.dump])
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _score_input(dump, shard):
    """What a scoring job reads: a genome shard's HaplotypeCaller dump, a dump scored
    whole (shards: 1) or in place (its plan says which part), or one of the dump's
    shard files (a compressed dump)."""
    if GENOME_MODE:
        return f"results/genome/dumps/{shard}.txt"
    if N_SHARDS == 1 or IN_PLACE[dump]:
        return DUMPS[dump]
    return f"results/split/{dump}/{shard}.txt"


def get_score_input(wildcards):
    inputs = {"dump": _score_input(wildcards.dump, wildcards.shard)}
    if not GENOME_MODE and IN_PLACE[wildcards.dump]:
        inputs["plan"] = f"results/plan/{wildcards.dump}.tsv"
    return inputs


def get_part_flags(wildcards, input):
    """--plan PLAN --part K for a shard read in place, else nothing."""
    if "plan" not in input.keys():
        return []
    return ["--plan", input.plan, "--part", str(int(wildcards.shard))]


# ---- tables --------------------------------------------------------------------------

# output_format: the merged table's; the shard tables are json for json and jsonl (merge
# writes jsonl from json), tsv for tsv and tsv.gz. The report reads either (report_shard).
OUTPUT_FORMAT = config["output_format"]
TABLE_EXT = "tsv" if OUTPUT_FORMAT.startswith("tsv") else "json"
RESULT = f"results/likelihoods.{OUTPUT_FORMAT}"


def get_other_results():
    """The merged tables of the other output formats (an earlier run's), which the merge
    removes so that results/ holds one merged table, this run's."""
    return [
        f"results/likelihoods.{f}" for f in ("json", "jsonl", "tsv", "tsv.gz") if f != OUTPUT_FORMAT
    ]


def get_tables():
    """Every shard table, in the order of `dumps`, then of the shards."""
    return [f"results/tables/{d}/{s}.{TABLE_EXT}" for d in DUMPS for s in SHARD_IDS]


def get_digest_input(wildcards):
    """What report_shard reads of a shard: its table, the job's benchmark and log, and for
    the comparison with GATK the file it scored (with its plan, read in place)."""
    d, s = wildcards.dump, wildcards.shard
    inputs = {
        "table": f"results/tables/{d}/{s}.{TABLE_EXT}",
        "benchmark": f"benchmarks/score/{d}/{s}.tsv",
        "log": f"logs/score/{d}/{s}.log",
    }
    if GATK_VALUES:
        inputs["source"] = _score_input(d, s)
        if not GENOME_MODE and IN_PLACE[d]:
            inputs["plan"] = f"results/plan/{d}.tsv"
    return inputs


def get_figures_input(wildcards):
    """The shards' digests and the benchmarks of the other steps; the merged table first, so
    that its merge is timed."""
    inputs = {
        "result": RESULT,
        "digests": [f"results/report/shards/{d}/{s}.json" for d in DUMPS for s in SHARD_IDS],
        "bench_merge": ["benchmarks/merge.tsv"],
        "bench_digest": [f"benchmarks/report_shard/{d}/{s}.tsv" for d in DUMPS for s in SHARD_IDS],
    }
    if not GENOME_MODE:
        inputs["bench_plan"] = [f"benchmarks/plan/{d}.tsv" for d in DUMPS if IN_PLACE[d]]
        inputs["bench_split"] = [f"benchmarks/split/{d}.tsv" for d in SPLIT]
    return inputs


def get_all():
    """What `all` asks for: the merged table and the report's figures."""
    return [RESULT, *rules.report_figures.output]


def _dump_family(path):
    """"pdhmm" for a PDHMM dump (DRAGEN-GATK --pdhmm-results-file: 8 tab-separated fields,
    or its header), "standard" for a HaplotypeCaller results file or a batch file, None
    when it cannot be told (empty or unreadable: haplik says why)."""
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rt") if gz else open(path) as f:
            for line in f:
                line = line.rstrip("\r\n")
                if line.startswith("# hap-bases"):
                    return "pdhmm" if line.startswith("# hap-bases\thap-pd-bases") else "standard"
                if line.strip() and not line.startswith("#"):
                    return "pdhmm" if line.count("\t") == 7 else "standard"
    except (OSError, UnicodeDecodeError, EOFError):
        pass
    return None


def _check_families():
    """A run scores one model: refuse PDHMM dumps with HaplotypeCaller (or batch) dumps
    before any job runs, naming one of each."""
    families = {}
    for path in DUMPS.values():
        family = _dump_family(path)
        if family:
            families.setdefault(family, path)
    if len(families) > 1:
        raise WorkflowError(
            "haplik workflow: dumps of two families in one run: "
            f"{families['pdhmm']} is a PDHMM dump (DRAGEN-GATK --pdhmm-results-file), "
            f"{families['standard']} is not; a run scores one model: run them apart"
        )


def _carries_gatk_values(path):
    """Whether a dump's first record has the 7th field, GATK's value (a HaplotypeCaller
    results file; a batch file has none), and no comment before it marks that column as a
    placeholder (scripts/gen_batches.py). Unreadable: no (Snakemake reports it missing).
    """
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rt") if gz else open(path) as f:
            for line in f:
                if line.startswith("# expected-result placeholder"):
                    return False
                if line.strip() and not line.startswith("#"):
                    return len(line.split()) == 7
    except (OSError, UnicodeDecodeError, EOFError):
        pass
    return False


# HaplotypeCaller's dumps always carry GATK's values; in the dumps mode, any dump whose first
# record does makes the report plot |haplik - GATK|.
GATK_VALUES = GENOME_MODE or any(_carries_gatk_values(p) for p in DUMPS.values())


def _hc_haplik_libs():
    """genome.pair_hmm_libs as an absolute path when HaplotypeCaller runs haplik's Pair-HMM
    (genome.pair_hmm: haplik), else None."""
    if config["genome"]["pair_hmm"] != "haplik":
        return None
    return os.path.abspath(config["genome"]["pair_hmm_libs"])


def get_hc_pair_hmm_libs():
    """The libraries HaplotypeCaller loads first from genome.pair_hmm_libs, so that a folder
    not prepared is reported before anything runs."""
    libs = _hc_haplik_libs()
    return [os.path.join(libs, f"lib{n}.so") for n in ("gkl_utils", "gkl_pairhmm_omp")] if libs else []


def get_hc_launcher():
    """gatk; with haplik's Pair-HMM, GKL's loader told to take every GKL library from
    java.library.path instead of GATK's jar."""
    return "USE_LIBRARY_PATH=1 gatk" if _hc_haplik_libs() else "gatk"


def get_hc_java_options():
    libs = _hc_haplik_libs()
    opts = config["genome"]["java_options"]
    return f"{opts} -Djava.library.path={libs}" if libs else opts


def get_hc_pair_hmm():
    """With haplik's Pair-HMM, GKL's OpenMP implementation by name: a library that fails to
    load then stops HaplotypeCaller instead of leaving it on its Java Pair-HMM."""
    return "--pair-hmm-implementation AVX_LOGLESS_CACHING_OMP" if _hc_haplik_libs() else ""


def get_reference():
    return config["genome"]["reference"]


def get_reference_fai():
    return f"{config['genome']['reference']}.fai"


def get_bams():
    return config["genome"]["bams"]


def get_hc_inputs():
    """-I BAM ... for HaplotypeCaller."""
    return " ".join(f"-I {shlex.quote(b)}" for b in config["genome"]["bams"])


# ---- checks before any job runs --------------------------------------------------------

if not GENOME_MODE:
    _check_families()
_check_haplik_config()
