// The policy and learner blocks of every training config (config::PolicyConfig and
// config::AgentConfig, datasets/proto/chip_placement.proto), shared by place-train (chip and
// device), place and nas-search: defaults taken from the option structs of encoders/policy.h
// and agents/learner.h, one set of range checks, and the conversion back to those structs.
// Torch-free: the option structs are plain; the policy preset (an encoders function) stays with
// the callers that offer it.
#pragma once

#include <cstdint>

#include "agents/learner.h"
#include "datasets/proto/chip_placement.pb.h"
#include "encoders/policy.h"

namespace placerl {

// Sizes of encoders::PolicyOptions{} (the preset field is left unset).
void FillDefaultPolicyConfig(config::PolicyConfig* p);
// Every field of agents::AgentOptions{} (CT's PPO values).
void FillDefaultAgentConfig(config::AgentConfig* a);

// ConfigError naming the key ("agent.learning_rate must be in (0, 1)", …).
void CheckPolicyConfig(const config::PolicyConfig& p);
void CheckAgentConfig(const config::AgentConfig& a);

// Sizes, the lstm preset's encoder and attention, and the bounded-logit option (the preset is
// the caller's).
encoders::PolicyOptions PolicyOptionsFrom(const config::PolicyConfig& p);
agents::AgentOptions AgentOptionsFrom(const config::AgentConfig& a, uint64_t seed);

}  // namespace placerl
