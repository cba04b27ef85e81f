"""ONNX Runtime's InferenceSession, over subgraph.Session.

Code written for ONNX Runtime changes one line,

    import onnxruntime as ort   ->   import subgraph as ort

and keeps the calls users make: InferenceSession(path_or_bytes,
sess_options, providers, provider_options), get_inputs()/get_outputs()
(NodeArg objects with .name, .shape and .type), run(output_names, feeds)
returning a list, get_providers(), SessionOptions, end_profiling(). This is
an adapter only (ONNX Runtime's own Python InferenceSession is the same
over its C++ session): loading, partitioning, running and the error kinds
are subgraph.Session's.

Providers name backends (docs/python.md):

    CPUExecutionProvider    onednn where its plugin is found, else the
                            reference backend (which runs whatever the
                            other providers leave, as ORT's CPU provider)
    DnnlExecutionProvider   onednn
    CUDAExecutionProvider   cudnn

and subgraph's own backend names (plugins by name or file, built-in and
Python backends) are providers too. A provider ONNX Runtime knows whose
backend is not here (CUDAExecutionProvider without the cudnn plugin, or
without a GPU) is skipped with a warning, as ONNX Runtime skips one it was built without; a
name that is neither raises subgraph.InvalidArgument naming those
available.
"""
import enum as _enum
import json as _json
import os as _os
import threading as _threading
import time as _time
import warnings as _warnings

from . import _subgraph

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "NodeArg", "GraphOptimizationLevel",
    "ExecutionMode", "get_available_providers", "get_all_providers", "get_device",
    "set_default_logger_severity",
]

# ONNX Runtime's provider names and the backend each means here; None for
# CPUExecutionProvider, which depends on what is installed (_cpu_backend).
_PROVIDER_BACKENDS = {
    "CUDAExecutionProvider": "cudnn",
    "DnnlExecutionProvider": "onednn",
    "CPUExecutionProvider": None,
}

# The element types ONNX Runtime names ("tensor(float)"), by numpy name.
_ORT_TYPES = {
    "float32": "float", "float64": "double", "float16": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "bool", "str": "string",
}


class GraphOptimizationLevel(_enum.IntEnum):
    """ONNX Runtime's levels: ORT_DISABLE_ALL runs no passes before
    partitioning (passes="none"); the others run subgraph's default
    pipeline."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(_enum.IntEnum):
    """Accepted for ONNX Runtime's code; subgraph's runtime decides itself
    which steps run in parallel."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """ONNX Runtime's SessionOptions. These change what a session does:

    intra_op_num_threads      worker threads (0: one per core)
    graph_optimization_level  ORT_DISABLE_ALL: no passes before partitioning
    enable_profiling          time every step of every run; end_profiling()
                              writes them as ONNX Runtime's JSON trace
    profile_file_prefix       the trace's file name prefix
    optimized_model_filepath  write the model as the session runs it
                              (simplified and partitioned) there, .onnx or .sg

    These are accepted, and change nothing: inter_op_num_threads,
    execution_mode, log_severity_level, log_verbosity_level, logid,
    enable_cpu_mem_arena, enable_mem_pattern, enable_mem_reuse. Any other
    attribute is an AttributeError, never silently ignored.
    """
    __slots__ = (
        "intra_op_num_threads", "graph_optimization_level", "enable_profiling",
        "profile_file_prefix", "optimized_model_filepath", "inter_op_num_threads",
        "execution_mode", "log_severity_level", "log_verbosity_level", "logid",
        "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse",
    )

    def __init__(self):
        self.intra_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = "subgraph_profile_"
        self.optimized_model_filepath = ""
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True


class RunOptions:
    """Accepted by InferenceSession.run for ONNX Runtime's code; subgraph
    reads none of its fields."""
    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "run_tag",
                 "terminate", "only_execute_path_to_fetches")

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False


class NodeArg:
    """An input or output of a session, as ONNX Runtime describes it: its
    name, its shape (an int per static dim, the symbol's name for a
    symbolic one, None for an unknown one) and its type ("tensor(float)")."""
    __slots__ = ("name", "shape", "type")

    def __init__(self, name, shape, type):
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


def _plugins():
    """{name: None if it can run here, else why not} of the plugins on the
    search path, by file name (what a backend list finds by name)."""
    out = {}
    for p in _subgraph.plugins():
        name = _os.path.basename(p["path"])[:-len(".so")]
        out.setdefault(name, p.get("error"))
    return out


def _unusable(backend):
    """Why plugin `backend` cannot run here, or None when it can."""
    return _plugins().get(backend, "no %s plugin on the plugin search path" % backend)


def _cpu_backend():
    """What CPUExecutionProvider runs on: onednn where it is, else the
    reference backend alone (None)."""
    return None if _unusable("onednn") else "onednn"


def get_all_providers():
    """The ONNX Runtime provider names subgraph maps to backends."""
    return list(_PROVIDER_BACKENDS)


def get_available_providers():
    """The ONNX Runtime provider names usable here, in priority order
    (CUDAExecutionProvider where the cudnn plugin is, DnnlExecutionProvider
    where the onednn plugin is, CPUExecutionProvider always)."""
    return [p for p, backend in _PROVIDER_BACKENDS.items()
            if backend is None or not _unusable(backend)]


def get_device():
    """"GPU" where the cudnn plugin can run, else "CPU"."""
    return "CPU" if _unusable("cudnn") else "GPU"


def set_default_logger_severity(level):
    """Accepted for ONNX Runtime's code; subgraph logs nothing to silence."""
    if not isinstance(level, int) or not 0 <= level <= 4:
        raise _subgraph.InvalidArgument("logger severity is an int from 0 to 4, not %r" % (level,))


def _is_backend(name):
    """True if `name` is one of subgraph's own backends: built in or
    registered from Python, a plugin on the search path, or a plugin file."""
    return ("/" in name or name.endswith(".so") or name in _subgraph._backend_names()
            or name in _plugins())


def _unknown_provider(name):
    usable = [name for name, why in _plugins().items() if not why]
    backends = sorted(set(_subgraph._backend_names()) | set(usable))
    return _subgraph.InvalidArgument(
        "unknown provider '%s'; available: %s, and subgraph's backends %s" % (
            name, ", ".join(get_available_providers()), ", ".join(backends)))


def _normalized_providers(providers, provider_options):
    """[(name, {option: value})], from ONNX Runtime's two forms: names
    with a parallel provider_options list, or (name, options) tuples."""
    if providers is None:
        providers = ["CPUExecutionProvider"]
    if isinstance(providers, str):
        raise _subgraph.InvalidArgument(
            "providers is a list of names, e.g. ['%s'], not a str" % providers)
    providers = list(providers)
    if provider_options is not None:
        provider_options = list(provider_options)
        if len(provider_options) != len(providers):
            raise _subgraph.InvalidArgument(
                "provider_options has %d entries for %d providers; give one dict per provider"
                % (len(provider_options), len(providers)))
    out = []
    for i, p in enumerate(providers):
        options = provider_options[i] if provider_options is not None else {}
        if isinstance(p, tuple):
            if len(p) != 2 or provider_options is not None:
                raise _subgraph.InvalidArgument(
                    "a provider is a name or a (name, options dict) pair, and provider_options "
                    "goes only with names")
            p, options = p
        if not isinstance(p, str):
            raise _subgraph.InvalidArgument("a provider is named by a str, not %s"
                                            % type(p).__name__)
        if not isinstance(options, dict):
            raise _subgraph.InvalidArgument("the options of provider '%s' are a dict, not %s"
                                            % (p, type(options).__name__))
        out.append((p, options))
    return out


def _resolve(providers):
    """(backends, plugin options, the providers used) for the normalized
    `providers`. CPUExecutionProvider ends the list whether or not named,
    as in ONNX Runtime: the reference backend runs what no other takes."""
    backends, plugin_options, used = [], {}, []
    for name, options in providers:
        if name in _PROVIDER_BACKENDS:
            backend = _PROVIDER_BACKENDS[name] or _cpu_backend()
            why = _PROVIDER_BACKENDS[name] and _unusable(backend)
            if why:
                _warnings.warn("provider '%s' is not available here (%s); available providers: %s"
                               % (name, why, ", ".join(get_available_providers())), stacklevel=4)
                continue
        elif _is_backend(name):
            backend = name
        else:
            raise _unknown_provider(name)
        if backend is None and options:
            raise _subgraph.InvalidArgument(
                "provider '%s' runs on the reference backend here, which takes no options (%s)"
                % (name, ", ".join(sorted(options))))
        if name not in used:
            used.append(name)
        if backend is not None and backend not in backends:
            backends.append(backend)
        for key, value in options.items():
            if isinstance(value, bool):
                value = "1" if value else "0"
            plugin_options["%s.%s" % (backend, key)] = str(value)
    if "CPUExecutionProvider" not in used:
        used.append("CPUExecutionProvider")
    return backends, plugin_options, used


class InferenceSession:
    """ONNX Runtime's InferenceSession (see this module's docstring).

    Args:
        path_or_bytes: a .onnx (or .sg) path, or the model's bytes.
        sess_options: a SessionOptions, or None for the defaults.
        providers: provider names in priority order, or (name, options)
            pairs; None is ["CPUExecutionProvider"].
        provider_options: one dict per provider, options for its backend's
            plugin ({"precision": "bf16"} for onednn becomes its
            plugin option "onednn.precision").
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        unknown = sorted(set(kwargs) - {"disabled_optimizers"})
        if unknown:
            raise TypeError("InferenceSession got unexpected keyword arguments: %s"
                            % ", ".join(unknown))
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise _subgraph.InvalidArgument("sess_options is a subgraph.SessionOptions, not %s"
                                            % type(sess_options).__name__)
        self._options = sess_options if sess_options is not None else SessionOptions()
        requested = _normalized_providers(providers, provider_options)
        self._provider_options = {name: dict(o) for name, o in requested}
        start = _time.time_ns()
        self._create(path_or_bytes, requested)
        self._profile_start_ns = start
        self._events = []
        self._events_lock = _threading.Lock()
        self._profiling = bool(self._options.enable_profiling)
        if self._profiling:
            self._event("Session", "session_initialization", start, _time.time_ns(), {})
        if self._options.optimized_model_filepath:
            self._session.save(_os.fspath(self._options.optimized_model_filepath))

    def _create(self, model, requested):
        backends, plugin_options, used = _resolve(requested)
        o = self._options
        try:
            self._session = _subgraph.Session(
                model, backends=backends, threads=o.intra_op_num_threads,
                plugin_options=plugin_options,
                passes="none" if o.graph_optimization_level == GraphOptimizationLevel.ORT_DISABLE_ALL
                else "default")
        except _subgraph.Error as e:
            # ONNX Runtime falls back to the CPU when the CUDA provider
            # fails to start (no device); so does this, saying why.
            gpu = [(n, opt) for n, opt in requested if n == "CUDAExecutionProvider"]
            if not gpu or isinstance(e, (_subgraph.NoSuchFile, _subgraph.InvalidArgument)):
                raise
            rest = [(n, opt) for n, opt in requested if n != "CUDAExecutionProvider"]
            rest = rest or [("CPUExecutionProvider", {})]
            _warnings.warn("provider CUDAExecutionProvider failed (%s); falling back to %s"
                           % (e, [n for n, _ in rest]), stacklevel=3)
            return self._create(model, rest)
        self._providers = used
        self._inputs = [NodeArg(n, d, "tensor(%s)" % _ORT_TYPES.get(t, t))
                        for n, t, d in self._session.inputs]
        self._outputs = [NodeArg(n, d, "tensor(%s)" % _ORT_TYPES.get(t, t))
                         for n, t, d in self._session.outputs]

    @property
    def session(self):
        """The subgraph.Session underneath (report, backends, warnings)."""
        return self._session

    def get_inputs(self):
        """The model's inputs, as NodeArg objects."""
        return list(self._inputs)

    def get_outputs(self):
        """The model's outputs, as NodeArg objects."""
        return list(self._outputs)

    def get_overridable_initializers(self):
        """None here: subgraph does not override initializers."""
        return []

    def get_providers(self):
        """The providers this session uses, in priority order, ending with
        CPUExecutionProvider."""
        return list(self._providers)

    def get_provider_options(self):
        """{provider: its options as given}."""
        return {p: dict(self._provider_options.get(p, {})) for p in self._providers}

    def get_session_options(self):
        return self._options

    def run(self, output_names, input_feed, run_options=None):
        """Runs one request: `input_feed` is {input name: numpy array};
        returns the outputs named in `output_names` (None or []: all, in
        the model's order) as a list of numpy arrays."""
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise _subgraph.InvalidArgument("run_options is a subgraph.RunOptions or None, not %s"
                                            % type(run_options).__name__)
        if isinstance(output_names, str):
            raise _subgraph.InvalidArgument(
                "output_names is a list of names or None, not a str: run([%r], feeds)"
                % output_names)
        if not isinstance(input_feed, dict):
            raise _subgraph.InvalidArgument(
                "input_feed is a dict {input name: numpy array}, not %s"
                % type(input_feed).__name__)
        names = list(output_names) if output_names else [o.name for o in self._outputs]
        if not self._profiling:
            out = self._session.run(input_feed, names)
        else:
            start = _time.time_ns()
            out, profile = self._session.run_with_profile(input_feed, names)
            self._record(start, profile)
        return [out[n] for n in names]

    # --- profiling -------------------------------------------------------------

    def _event(self, category, name, start_ns, end_ns, args):
        self._events.append({
            "cat": category, "pid": _os.getpid(), "tid": _threading.get_native_id(),
            "dur": (end_ns - start_ns) // 1000, "ts": (start_ns - self._profile_start_ns) // 1000,
            "ph": "X", "name": name, "args": args})

    def _record(self, start_ns, profile):
        """ONNX Runtime's events for one run: model_run, and a *_kernel_time
        per step laid end to end from the run's start (subgraph times each
        step, not its start)."""
        with self._events_lock:
            end = start_ns + int(profile["wall_ms"] * 1e6)
            self._event("Session", "model_run", start_ns, end, {})
            t = start_ns
            for step in profile["steps"]:
                dur = int(step["ms"] * 1e6)
                self._event("Node", step["name"] + "_kernel_time", t, t + dur, {
                    "op_name": step["op"], "provider": step["backend"],
                    "kernel_provider": step["provider"], "scope": step["scope"],
                    "bytes": step["bytes"]})
                t += dur

    def end_profiling(self):
        """Ends profiling and writes what it recorded (ONNX Runtime's JSON
        trace, which chrome://tracing and Perfetto read) to
        <profile_file_prefix><date>.json in the working folder; returns
        that name, or "" when profiling was off."""
        if not self._profiling:
            return ""
        self._profiling = False
        name = "%s%s.json" % (self._options.profile_file_prefix,
                              _time.strftime("%Y-%m-%d_%H-%M-%S"))
        with self._events_lock, open(name, "w") as f:
            _json.dump(self._events, f, indent=0)
        return name

    def get_profiling_start_time_ns(self):
        return self._profile_start_ns
