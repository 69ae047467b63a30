"""placerl from Python: the registry's environments with Gymnasium's API and Circuit Training's
PlacementCost over placerl's exact proxy cost. The work is done in C++ (placerl._core); this file
only arranges it the way Gymnasium and maskable-PPO implementations expect (Gymnasium itself is not
needed). docs/python.md says what is covered.

    import placerl
    env = placerl.make("chip(seed=1)")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(env.action_masks().nonzero()[0][0]))

Observations are dicts of NumPy arrays that VIEW the environment's buffers: they change on the
next step or reset (copy them to keep them) and are read-only.
"""

import operator

import numpy as np

from . import _core
from ._core import ConfigError, Error, InfeasibleAction, ParseError
from . import perf_model  # placerl.perf_model.run / search / infer / simulate (perf-model's documents)

__all__ = ["make", "make_vec", "Env", "VecEnv", "Discrete", "Box", "Dict", "PlacementCost", "Policy", "Error",
           "ConfigError", "ParseError", "InfeasibleAction"]


def _one_line(error):
    """pybind11's TypeError for arguments of the wrong type spans several lines (the signatures,
    then the arguments): the same text on one line, as every other error of the package."""
    return TypeError(" ".join(line.strip() for line in str(error).splitlines() if line.strip()))


def _one_line_type_errors(method):
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except TypeError as e:
            if "\n" not in str(e):
                raise
            raise _one_line(e) from None
    call.__name__ = getattr(method, "__name__", "call")
    call.__doc__ = getattr(method, "__doc__", None)
    return call


class PlacementCost(_core.PlacementCost):
    """Circuit Training's plc_client.PlacementCost over placerl's exact proxy cost
    (cost_models/chip/plc_client.h; docs/python.md lists the methods). The methods are the C++
    ones; wrong argument types raise a one-line TypeError."""


for _name, _method in vars(_core.PlacementCost).items():
    if callable(_method) and (not _name.startswith("_") or _name == "__init__"):
        setattr(PlacementCost, _name, _one_line_type_errors(_method))
del _name, _method


def _integer(value, what):
    """A Python or NumPy integer as int; anything else is a TypeError naming `what`."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer (got {type(value).__name__})") from None


def _seed(value, what, limit=2 ** 64):
    """A seed: an integer in [0, limit) (ConfigError outside, TypeError for another type)."""
    seed = _integer(value, what)
    if seed < 0:
        raise ConfigError(f"{what} must be >= 0 (got {seed})")
    if seed >= limit:
        raise ConfigError(f"{what} must be < 2**{limit.bit_length() - 1} (got {seed})")
    return seed


class Discrete:
    """Gymnasium's Discrete(n) contract: actions 0 … n-1 as int64 scalars."""

    def __init__(self, n):
        self.n = int(n)
        self.shape = ()
        self.dtype = np.dtype(np.int64)
        self.start = 0

    def contains(self, x):
        try:
            v = int(x)
        except (TypeError, ValueError):
            return False
        return v == x and 0 <= v < self.n

    def sample(self, mask=None, rng=None):
        """A uniform action; with `mask` (n values, nonzero = allowed) a uniform legal one."""
        rng = rng if rng is not None else np.random.default_rng()
        if mask is None:
            return int(rng.integers(self.n))
        legal = np.flatnonzero(np.asarray(mask))
        if legal.size == 0:
            raise ConfigError("sample: the mask allows no action")
        return int(rng.choice(legal))

    def __repr__(self):
        return f"Discrete({self.n})"


class Box:
    """Gymnasium's Box contract: shape, dtype, low, high."""

    def __init__(self, low, high, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low)) and bool(np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.shape}, {self.dtype})"


class Dict:
    """Gymnasium's Dict space contract: a mapping of names to spaces."""

    def __init__(self, spaces):
        self.spaces = dict(spaces)
        self.shape = None
        self.dtype = None

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def contains(self, x):
        return isinstance(x, dict) and all(k in x and s.contains(x[k]) for k, s in self.spaces.items())

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k}: {v}" for k, v in self.spaces.items()) + ")"


def _observation_space(core):
    static = core.static_arrays()
    dyn = core.dynamic_arrays()
    inf = np.inf
    return Dict({
        "node_features": Box(-inf, inf, static["node_features"].shape, np.float32),
        "node_dynamic": Box(-inf, inf, dyn["node_dynamic"].shape, np.float32),
        "action_mask": Box(0, 1, dyn["action_mask"].shape, np.uint8),
        "action_features": Box(-inf, inf, dyn["action_features"].shape, np.float32),
        "current_node": Box(-1, max(0, static["node_features"].shape[0] - 1), (), np.int32),
    })


class Env:
    """One registry environment with Gymnasium's API (reset/step/action_space/observation_space)
    and action_masks() for maskable PPO. Deterministic: reset(seed=s) and the same actions give
    the same observations, rewards and info; reset() without a seed takes the next seed."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, spec, _core_env=None):
        self._core = _core.make_environment(spec) if _core_env is None else _core_env
        self.spec = self._core.name  # the registry string with every parameter resolved
        self.action_space = Discrete(self._core.num_actions)
        self.observation_space = _observation_space(self._core)
        self._static = self._core.static_arrays()
        self._stepper = _core.GymStepper(self._core)
        self.step = self._stepper.step  # the C++ call itself: no Python frame per step
        self._next_seed = 0

    def _live(self):
        if self._core is None:
            raise Error("the environment is closed")
        return self._core

    @property
    def unwrapped(self):
        return self

    @property
    def static(self):
        """The instance's static graph: node features, edges (src, dst, weight, features),
        metadata and their names, as read-only NumPy views."""
        self._live()
        return self._static

    @property
    def episode_length(self):
        return self._live().episode_length

    def reset(self, *, seed=None, options=None):
        core = self._live()
        seed = self._next_seed if seed is None else _seed(seed, "reset: the seed")
        self._next_seed = seed + 1
        return self._stepper.reset(seed)

    def step(self, action):
        """(obs, reward, terminated, truncated, info). Instances call _core.GymStepper.step directly
        (bound in __init__): an integer (Python, NumPy or an integral float) or ConfigError /
        InfeasibleAction / TypeError."""
        return self._stepper.step(action)

    def action_masks(self):
        """The legal actions now, as a bool array (a copy)."""
        return self._live().dynamic_arrays()["action_mask"].astype(bool)

    def clone(self):
        """An independent copy in the same state."""
        other = Env.__new__(Env)
        other.__dict__.update(self.__dict__)
        other._core = self._live().clone()
        other._stepper = _core.GymStepper(other._core)
        other.step = other._stepper.step
        return other

    def close(self):
        self._core = None
        if self._stepper is not None:
            self._stepper.close()

    def __repr__(self):
        return f"placerl.Env({self.spec if self._core is not None else 'closed'})"


def make(spec):
    """An environment from a registry string: "chip(…)", "device(…)", "block(…)", … (docs/environments.md)."""
    if not isinstance(spec, str):
        raise ConfigError(f"make: the spec must be a string (got {type(spec).__name__})")
    return Env(spec)


class VecEnv:
    """n copies of one environment stepped together in C++ (OpenMP), each resetting itself when
    its episode ends: the observation after an ending step is the new episode's first, and
    info["final_info"] / info["episode_return"] hold the finished episode's values where done.
    Copy i starts with seed + i; each further episode of it adds n."""

    def __init__(self, spec, n, seed=0):
        n = _integer(n, "make_vec: n")
        if not 1 <= n <= 4096:
            raise ConfigError(f"make_vec: n must be in [1, 4096] (got {n})")
        self._core = _core.VectorEnv(spec, n, _seed(seed, "make_vec: the seed"))
        first = self._core.env(0)
        self.num_envs = int(n)
        self.single_action_space = Discrete(first.num_actions)
        self.single_observation_space = _observation_space(first)
        self._info_names = list(first.info().keys())

    def _live(self):
        if self._core is None:
            raise Error("the vector environment is closed")
        return self._core

    def reset(self, *, seed=None, options=None):
        core = self._live()
        if seed is not None:
            raise ConfigError("VecEnv.reset: the seeds are given to make_vec (seed=…)")
        return core.gym_reset(self._info_names)

    def step(self, actions):
        """(obs, reward, terminated, truncated, info) in one C++ call: views of the batch buffers
        (valid until the next step; copy them to keep them)."""
        return self._live().gym_step(actions)

    def action_masks(self):
        return self._live().arrays()["action_mask"].astype(bool)

    def close(self):
        self._core = None


def make_vec(spec, n, seed=0):
    """n copies of make(spec) stepped together (see VecEnv)."""
    if not isinstance(spec, str):
        raise ConfigError(f"make_vec: the spec must be a string (got {type(spec).__name__})")
    return VecEnv(spec, n, seed)


class Policy:
    """A trained policy: a place-train (or device-train) checkpoint, acting on an environment of
    the layout it was trained on (encoders/policy.h; the forward pass is C++/LibTorch).

        policy = placerl.Policy.load("experiments/pretrained/chip")
        env = placerl.make("chip(netlist=…,plc=…)")
        obs, info = env.reset(seed=1)
        while True:
            obs, reward, terminated, truncated, info = env.step(policy.act(env, greedy=True))
            if terminated:
                break

    act() takes the environment (placerl.Env), not only its observation: the policy's graph
    encoder reads the environment's static graph (cached per instance)."""

    def __init__(self, core):
        self._core = core

    @staticmethod
    def load(checkpoint):
        """A checkpoint file, or a run directory (its checkpoints/latest.ckpt), as `place` takes."""
        import os
        if not isinstance(checkpoint, (str, os.PathLike)):
            raise ConfigError(f"Policy.load: the checkpoint must be a path (got {type(checkpoint).__name__})")
        path = os.fspath(checkpoint)
        if os.path.isdir(path):
            f = os.path.join(path, "checkpoints", "latest.ckpt")
            if not os.path.exists(f):
                raise ConfigError(f"{path}: no checkpoints/latest.ckpt in this directory")
            path = f
        elif not os.path.exists(path):
            raise ConfigError(f"{path}: no such checkpoint")
        try:
            from . import _policy  # LibTorch: loaded here, not by `import placerl`
        except ImportError as e:
            raise Error(f"Policy.load: placerl was built without LibTorch ({e})") from None
        return Policy(_policy.Policy(path))

    @staticmethod
    def _env_core(env):
        if isinstance(env, Env):
            return env._live()
        if isinstance(env, _core.Environment):
            return env
        raise TypeError(f"Policy: expected a placerl.Env (got {type(env).__name__})")

    def act(self, env, greedy=True, seed=None):
        """The action for env's current state: the most likely legal one (greedy=True) or a
        sample from the policy (its own RNG, reseeded with `seed` when given)."""
        if seed is not None:
            seed = _seed(seed, "Policy.act: the seed", 2 ** 63)
        return self._core.act(self._env_core(env), bool(greedy), seed)

    def make_env(self, netlist=None, plc=None):
        """The chip environment `place --checkpoint … [--netlist …] [--plc …]` builds for this
        checkpoint: the training run's settings the checkpoint carries (cost weights, reward,
        soft-macro placement, FD schedule, cost map, feature maps, …; the defaults and the cost
        map its features name for a checkpoint written before it carried them) on the design
        asked for (the synthetic chip without `netlist`). The same C++ as `place`
        (env/chip/trained_env.h, env/chip/chip_env_config.h MakeChipEnv); its warnings (a setting changed,
        a training design on another .plc: CKPT-0001) are Python warnings. `env.trained_settings`
        is result.json's {"recorded": …, "changed": {…}}."""
        import json
        import os
        import warnings
        args = []
        for name, value in (("netlist", netlist), ("plc", plc)):
            if value is None:
                args.append("")
            elif isinstance(value, (str, os.PathLike)):
                args.append(os.fspath(value))
            else:
                raise TypeError(f"Policy.make_env: {name} must be a path (got {type(value).__name__})")
        core, changed, recorded, raised = _core.make_trained_chip_env(
            self._core.path, self._core.run_config, self._core.action_feature_names, *args)
        for wid, message in raised:
            warnings.warn(f"[{wid}]: {message}", stacklevel=2)
        env = Env(None, _core_env=core)
        self._core.check(core)  # the layout, as place checks it (a policy of another kind: ConfigError)
        env.trained_settings = {"recorded": bool(recorded), "changed": json.loads(changed)}
        return env

    def evaluate(self, env):
        """(masked logits as a NumPy array, value) of env's current state."""
        return self._core.evaluate(self._env_core(env))

    @property
    def path(self):
        return self._core.path

    @property
    def run_config(self):
        """The training run's config (text format) the checkpoint carries; None for a checkpoint
        written before checkpoints carried it (experiments/pretrained/chip)."""
        return self._core.run_config

    @property
    def action_feature_names(self):
        return list(self._core.action_feature_names)

    def __repr__(self):
        return f"placerl.Policy({self._core.path})"
