# common.smk - config validation and the functions the rules share (no rules here).

import gzip
import json
import re
import shlex
import shutil
import subprocess

from snakemake.utils import validate

validate(config, schema="../schemas/config.schema.yaml")

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
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._") or "dump"
        name, k = stem, 2
        while name in names:
            name, k = f"{stem}_{k}", k + 1
        names.append(name)
    return names


if GENOME_MODE:
    if config.get("dumps"):
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
    known = _haplik_keys()
    if known is None:
        logger.warning(
            f"haplik workflow: cannot run {HAPLIK} score --print-config here: "
            "haplik_config is checked by the scoring jobs only"
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
    """config scoring.gpu_lock_dir as an absolute path, or "" for none."""
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

# output_format: the merged table's; the shard tables are json for json and jsonl (the
# report reads them; merge writes jsonl from json), tsv for tsv and tsv.gz.
OUTPUT_FORMAT = config["output_format"]
TABLE_EXT = "tsv" if OUTPUT_FORMAT.startswith("tsv") else "json"
RESULT = f"results/likelihoods.{OUTPUT_FORMAT}"
# the report's figures read json tables
REPORT = TABLE_EXT == "json"


def get_tables():
    """Every shard table, in the order of `dumps`, then of the shards."""
    return [f"results/tables/{d}/{s}.{TABLE_EXT}" for d in DUMPS for s in SHARD_IDS]


def get_score_benchmarks():
    """The scoring jobs' benchmarks, in the order of get_tables()."""
    return [f"benchmarks/score/{d}/{s}.tsv" for d in DUMPS for s in SHARD_IDS]


def get_report_sources():
    """The file each shard scored, in the order of get_tables() (the report reads GATK's
    values from it)."""
    return [_score_input(d, s) for d in DUMPS for s in SHARD_IDS]


def get_all():
    """What `all` asks for: the merged table, and the report's figures where the shard
    tables are json."""
    return [RESULT] + (rules.report_figures.output if REPORT else [])


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
    results file; a batch file has none). Unreadable: no (Snakemake reports it missing).
    """
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rt") if gz else open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    return len(line.split()) == 7
    except (OSError, UnicodeDecodeError, EOFError):
        pass
    return False


# HaplotypeCaller's dumps always carry GATK's values; in the dumps mode, any dump whose first
# record does makes the report plot |haplik - GATK|.
GATK_VALUES = GENOME_MODE or any(_carries_gatk_values(p) for p in DUMPS.values())


def get_gatk_figure():
    """The report's |haplik - GATK| figure, as an output of report_figures, or none."""
    if not GATK_VALUES:
        return {}
    return {
        "gatk": report(
            "results/report/gatk_difference.svg",
            caption="../report/gatk_difference.rst",
            category="Likelihoods",
            labels={"figure": "|haplik - GATK|"},
        )
    }


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
