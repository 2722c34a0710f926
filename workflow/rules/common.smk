# common.smk - config validation and the functions the rules share (no rules here).

import gzip
import re
import shlex
import shutil

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


def _score_input(dump, shard):
    """What a scoring job reads: a genome shard's HaplotypeCaller dump, a dump scored
    whole (shards: 1), or one of the dump's shards."""
    if GENOME_MODE:
        return f"results/genome/dumps/{shard}.txt"
    if N_SHARDS == 1:
        return DUMPS[dump]
    return f"results/split/{dump}/{shard}.txt"


def get_score_input(wildcards):
    return _score_input(wildcards.dump, wildcards.shard)


def get_tables():
    """Every shard table, in the order of `dumps`, then of the shards."""
    return [f"results/tables/{d}/{s}.json" for d in DUMPS for s in SHARD_IDS]


def get_score_benchmarks():
    """The scoring jobs' benchmarks, in the order of get_tables()."""
    return [f"benchmarks/score/{d}/{s}.tsv" for d in DUMPS for s in SHARD_IDS]


def get_report_sources():
    """The file each shard scored, in the order of get_tables() (the report reads GATK's
    values from it)."""
    return [_score_input(d, s) for d in DUMPS for s in SHARD_IDS]


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
