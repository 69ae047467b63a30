#!/usr/bin/env python3
"""A CleanRL-style PPO, in one file, placing macros on a placerl chip environment from Python.

The policy scores every grid cell from the environment's per-cell maps (action_features: occupancy,
density, congestion, the current macro's wirelength change, …) with a small per-cell MLP — a 1×1
convolution over the maps — masked by action_masks(); the value is a pooled MLP of the same maps.
Sparse reward (−proxy cost at the end of the episode), Monte-Carlo returns, clipped PPO updates.
Prints one line per update and, at the end, the best proxy cost of PPO and of uniform random legal
placements given the same number of episodes.

    PYTHONPATH=build/python python3 python/examples/ppo_chip.py --env "chip(seed=1)" --updates 30
"""
import argparse
import sys
import time

import numpy as np
import torch
import torch.nn as nn

import placerl


class CellPolicy(nn.Module):
    def __init__(self, channels, hidden=32):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(channels, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(2 * channels, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, maps, mask):
        # maps [B, C, A], mask [B, A] bool → masked logits [B, A], value [B]
        x = maps.transpose(1, 2)
        logits = self.score(x).squeeze(-1).masked_fill(~mask, -1e9)
        pooled = torch.cat([maps.mean(dim=2), maps.amax(dim=2)], dim=1)
        return logits, self.value(pooled).squeeze(-1)


def play(env, policy, seed):
    """One episode; returns the per-step (maps, mask, action, log_prob, value), the rewards and the final info."""
    obs, _ = env.reset(seed=seed)
    steps, rewards = [], []
    while True:
        maps = torch.as_tensor(np.array(obs["action_features"]))[None]
        mask = torch.as_tensor(env.action_masks())[None]
        with torch.no_grad():
            logits, value = policy(maps, mask)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
        steps.append((maps[0], mask[0], action[0], dist.log_prob(action)[0], value[0]))
        obs, reward, terminated, truncated, info = env.step(int(action))
        rewards.append(reward)
        if terminated or truncated:
            return steps, rewards, info


def random_best(env, episodes, seed):
    rng = np.random.default_rng(seed)
    best = np.inf
    for e in range(episodes):
        env.reset(seed=seed + e)
        while True:
            _, _, terminated, _, info = env.step(env.action_space.sample(mask=env.action_masks(), rng=rng))
            if terminated:
                break
        if not info["infeasible"]:
            best = min(best, info["proxy_cost"])
    return best


def train(spec, updates, episodes_per_update=8, lr=3e-3, epochs=4, clip=0.2, seed=1, log=print):
    """Trains PPO for `updates` updates; returns (best proxy cost found, episodes played)."""
    torch.manual_seed(seed)
    env = placerl.make(spec)
    channels = env.observation_space["action_features"].shape[0]
    policy = CellPolicy(channels)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    best, episodes = np.inf, 0
    start = time.process_time()
    for update in range(1, updates + 1):
        batch, returns = [], []
        costs = []
        for _ in range(episodes_per_update):
            steps, rewards, info = play(env, policy, seed + episodes)
            episodes += 1
            g = np.cumsum(rewards[::-1])[::-1]  # γ = 1: Monte-Carlo returns
            batch += steps
            returns += list(g)
            if not info["infeasible"]:
                costs.append(info["proxy_cost"])
                best = min(best, info["proxy_cost"])
        maps = torch.stack([s[0] for s in batch])
        masks = torch.stack([s[1] for s in batch])
        actions = torch.stack([s[2] for s in batch])
        old_logp = torch.stack([s[3] for s in batch])
        values = torch.stack([s[4] for s in batch])
        ret = torch.as_tensor(returns, dtype=torch.float32)
        adv = ret - values
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(epochs):
            logits, v = policy(maps, masks)
            dist = torch.distributions.Categorical(logits=logits)
            ratio = torch.exp(dist.log_prob(actions) - old_logp)
            pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
            loss = pg + 0.5 * ((v - ret) ** 2).mean() - 0.01 * dist.entropy().mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
        if log:
            mean = np.mean(costs) if costs else float("nan")
            log(f"update {update:4d}  episodes {episodes:5d}  mean proxy {mean:.4f}  best {best:.4f}  "
                f"cpu {time.process_time() - start:.1f} s")
    return best, episodes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="chip(seed=1)", help='a registry string (default "chip(seed=1)")')
    ap.add_argument("--updates", type=int, default=30, help="PPO updates (default 30)")
    ap.add_argument("--episodes-per-update", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 1 <= a.updates <= 100000 or not 1 <= a.episodes_per_update <= 4096:
        ap.error("--updates and --episodes-per-update must be positive (and bounded)")
    torch.set_num_threads(1)
    try:
        best, episodes = train(a.env, a.updates, a.episodes_per_update, seed=a.seed)
        rand = random_best(placerl.make(a.env), episodes, a.seed + 10 ** 6)
    except placerl.Error as e:
        print(f"ppo_chip.py: error: {e}", file=sys.stderr)
        return 1
    print(f"best proxy cost after {episodes} episodes: PPO {best:.4f}, random legal placements {rand:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
