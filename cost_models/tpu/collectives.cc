#include "cost_models/tpu/collectives.h"

#include <algorithm>

namespace placerl::perf {

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all-reduce";
    case Collective::kReduceScatter: return "reduce-scatter";
    case Collective::kAllGather: return "all-gather";
    case Collective::kAllToAll: return "all-to-all";
    case Collective::kPermute: return "permute";
    case Collective::kBroadcast: return "broadcast";
  }
  return "?";
}

double RingTime(Collective c, const Ring& r, double S) {
  const int n = r.n;
  if (n <= 1) return 0;
  const double a = r.hop_latency, B = r.link_bw;
  const double frac = double(n - 1) / n;
  const double hops = r.bidirectional ? double((n + 1) / 2) : double(n - 1);
  const double bw = r.bidirectional ? 2 * B : B;
  const double ag = hops * a + frac * S / bw;
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter: return ag;
    case Collective::kAllReduce: return 2 * ag;
    case Collective::kAllToAll: return hops * a + frac * S / bw * (r.bidirectional ? 0.25 : 0.5);
    case Collective::kPermute: return a + (S / n) / B;
    case Collective::kBroadcast: return hops * a + S / bw;
  }
  return 0;
}

double IciGroupTime(Collective c, const AxisGroup& g, double S) {
  const int n = g.ici_size();
  if (n <= 1) return 0;
  const double frac = double(n - 1) / n;
  if (g.switched) {  // every member reaches every other one through the switch
    const double B = g.dim_bw[0];
    const double lat = double(n - 1) * g.hop_latency;
    switch (c) {
      case Collective::kAllGather:
      case Collective::kReduceScatter: return lat + frac * S / B;
      case Collective::kAllReduce: return 2 * (lat + frac * S / B);
      case Collective::kAllToAll: return g.hop_latency + frac * (S / n) / B;
      case Collective::kPermute: return g.hop_latency + (S / n) / B;
      case Collective::kBroadcast: return lat + S / B;
    }
    return 0;
  }
  double bw = 0, hops = 0, bidi_share = 0;
  for (int i = 0; i < g.ndims; ++i) {
    if (g.extent[i] <= 1) continue;
    const double w = g.wrap[i] ? 2 * g.dim_bw[i] : g.dim_bw[i];
    bw += w;
    bidi_share += g.wrap[i] ? w : 0;
    hops += g.wrap[i] ? double((g.extent[i] + 1) / 2) : double(g.extent[i] - 1);
  }
  const double lat = (hops + g.extra_hops) * g.hop_latency;
  const double ag = lat + frac * S / bw;
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter: return ag;
    case Collective::kAllReduce: return 2 * ag;
    case Collective::kAllToAll: {
      // ¼ of AG on bidirectional axes, ½ on one-way ones (bandwidth-weighted mix).
      const double f = bidi_share / bw;
      return lat + frac * S / bw * (0.25 * f + 0.5 * (1 - f));
    }
    case Collective::kPermute: {
      double min_bw = g.dim_bw[0];
      for (int i = 1; i < g.ndims; ++i) min_bw = std::min(min_bw, g.dim_bw[i]);
      return g.hop_latency + (S / n) / min_bw;
    }
    case Collective::kBroadcast: return lat + S / bw;
  }
  return 0;
}

double PhasedTorusAllReduce(const AxisGroup& g, double S) {
  if (g.ndims < 2) return IciGroupTime(Collective::kAllReduce, g, S);
  Ring x{g.extent[0], g.dim_bw[0], g.hop_latency, g.wrap[0]};
  Ring y{g.extent[1], g.dim_bw[1], g.hop_latency, g.wrap[1]};
  return RingTime(Collective::kReduceScatter, x, S) +
         RingTime(Collective::kAllReduce, y, S / g.extent[0]) +
         RingTime(Collective::kAllGather, x, S);
}

double CollectiveTime(Collective c, const AxisGroup& g, double S, double bw_eff,
                      double latency_floor, double dcn_eff) {
  if (g.size() <= 1) return 0;
  // Efficiency applies to bandwidth only: scale the bytes, not the latency.
  const double Se = S / bw_eff, Sd = S / (dcn_eff > 0 ? dcn_eff : bw_eff);
  const int n_ici = g.ici_size();
  const bool flat = g.flat_dcn && g.dcn_n > 1 &&
                    (c == Collective::kAllGather || c == Collective::kReduceScatter ||
                     c == Collective::kAllReduce);
  if (flat) {
    const int n = g.size();
    const double ag = double(n - g.dcn_n) * g.hop_latency + g.dcn_n * g.dcn_latency +
                      double(n - 1) / n * Sd / g.dcn_bw;
    return std::max(c == Collective::kAllReduce ? 2 * ag : ag, latency_floor);
  }
  const int a = g.onchip_n;
  const bool reduce_like = c == Collective::kAllGather || c == Collective::kReduceScatter ||
                           c == Collective::kAllReduce;
  double t = 0;
  if (a > 1) t += RingTime(c, Ring{a, g.onchip_bw, 0.0, false}, Se);
  // AG/RS/AR: the ICI phase moves one chip's share; the others stay conservative (whole S).
  t += IciGroupTime(c, g, reduce_like ? Se / a : Se);
  if (g.dcn_n > 1) {
    const int inner = a * n_ici;
    Ring dcn{g.dcn_n, g.dcn_bw, g.dcn_latency, false};
    switch (c) {
      case Collective::kAllReduce:
      case Collective::kReduceScatter:
      case Collective::kAllGather: t += RingTime(c, dcn, Sd / inner); break;
      case Collective::kAllToAll:  // DCN is switched: each chip sends directly
        t += g.dcn_latency + double(g.dcn_n - 1) / g.dcn_n * (Sd / g.size()) / g.dcn_bw;
        break;
      case Collective::kPermute: t += RingTime(c, dcn, Sd / inner); break;
      case Collective::kBroadcast: t += RingTime(c, dcn, Sd); break;
    }
  }
  return std::max(t, latency_floor);
}

}  // namespace placerl::perf
