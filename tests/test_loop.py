"""The one training loop (hgutils.loop): budgets, early stopping, best weights, resume, the gate."""

from __future__ import annotations

import math

import pytest
import torch

from hgutils.loop import Budget, LearnabilityGate, TrainTask, train


class LinearTask(TrainTask):
    """Least squares y = X w on minibatches; validation MSE on a held-out set (optionally noisy)."""

    def __init__(self, n=64, d=3, batch=16, lr=0.05, seed=0, val_noise=0.0, fail_at=None):
        g = torch.Generator().manual_seed(seed)
        self.X = torch.randn(n, d, generator=g, dtype=torch.float64)
        self.w_true = torch.randn(d, generator=g, dtype=torch.float64)
        self.y = self.X @ self.w_true
        self.Xv = torch.randn(32, d, generator=g, dtype=torch.float64)
        self.yv = self.Xv @ self.w_true + val_noise * torch.randn(32, generator=g, dtype=torch.float64)
        self.w = torch.zeros(d, dtype=torch.float64)
        self.batch, self.lr, self.fail_at, self.calls = batch, lr, fail_at, 0
        self.gen = torch.Generator().manual_seed(seed + 1)
        self.steps_per_epoch = math.ceil(n / batch)
        self.finished = None

    def batches(self, epoch):
        perm = torch.randperm(len(self.y), generator=self.gen)
        return [perm[i : i + self.batch] for i in range(0, len(perm), self.batch)]

    def step(self, idx, progress):
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise KeyboardInterrupt("simulated interruption")
        r = self.X[idx] @ self.w - self.y[idx]
        self.w = self.w - self.lr * 2 * self.X[idx].T @ r / len(idx)
        return {"loss": float((r**2).mean())}

    def evaluate(self):
        return {"mse": float(((self.Xv @ self.w - self.yv) ** 2).mean())}

    def probe(self):
        return {"loss": float(((self.X @ self.w - self.y) ** 2).mean())}

    def score(self, metrics):
        return -metrics["mse"]

    def state_dict(self):
        return {"w": self.w.clone(), "gen": self.gen.get_state()}

    def load_state_dict(self, state):
        self.w, _ = state["w"].clone(), self.gen.set_state(state["gen"])

    def snapshot(self):
        return self.w.clone()

    def restore(self, snapshot):
        self.w = snapshot.clone()

    def finish(self, completed):
        self.finished = completed


def test_budget_validation():
    with pytest.raises(ValueError, match="epochs or max_steps"):
        Budget()
    with pytest.raises(ValueError, match="positive int"):
        Budget(epochs=0)
    with pytest.raises(ValueError, match="positive int"):
        Budget(epochs=2, patience=True)
    assert Budget(epochs=3).total_steps(5) == 15
    assert Budget(max_steps=7).n_epochs(3) == 3  # enough epochs to spend the steps
    assert Budget(epochs=3, max_steps=4).total_steps(5) == 4


def test_history_has_one_row_per_epoch_and_the_loss_falls():
    task = LinearTask()
    log = train(task, Budget(epochs=5))
    assert [r["epoch"] for r in log.history] == [0, 1, 2, 3, 4]
    assert [r["step"] for r in log.history] == [4, 8, 12, 16, 20] and log.steps == 20
    loss = log.curve("train_loss")
    assert loss[-1] < 0.1 * loss[0]
    assert all(a >= b >= 0 for a, b in zip(log.epoch_seconds, log.train_seconds)) and len(log.epoch_seconds) == 5
    assert "val_mse" in log.history[0] and log.initial["loss"] > 10 * log.final["loss"]
    assert task.finished is True and log.stopped == "budget" and log.stop_detail == "5 epochs"


def test_max_steps_cut_an_epoch_short_and_it_is_still_evaluated():
    log = train(LinearTask(), Budget(epochs=10, max_steps=6))
    assert log.steps == 6 and [r["step"] for r in log.history] == [4, 6]
    assert log.stopped == "budget" and log.stop_detail == "6 optimiser steps"


def test_early_stopping_restores_the_best_weights():
    # lr too large: the validation error grows every epoch after the first
    task = LinearTask(lr=1.5)
    log = train(task, Budget(epochs=20, patience=2))
    assert len(log.history) == 3 and log.best_epoch == 0 and log.stopped == "plateau"
    best_mse = log.history[0]["val_mse"]
    assert task.evaluate()["mse"] == pytest.approx(best_mse)
    task2 = LinearTask(lr=1.5)
    train(task2, Budget(epochs=3, restore_best=False))
    assert task2.evaluate()["mse"] == pytest.approx(train(LinearTask(lr=1.5), Budget(epochs=3)).history[-1]["val_mse"])


def test_a_task_that_finishes_stops_the_loop():
    class Converges(LinearTask):
        def should_stop(self):
            return self.calls >= 3

    task = Converges()
    log = train(task, Budget(epochs=5))
    assert log.steps == 3 and task.finished is False and log.stopped == "finished"


def test_interrupted_run_resumes_to_the_same_result(tmp_path):
    ref = LinearTask()
    train(ref, Budget(epochs=4))
    ckpt = tmp_path / "run.ckpt"
    broken = LinearTask(fail_at=11)  # dies in epoch 2, after two epochs were checkpointed
    with pytest.raises(KeyboardInterrupt):
        train(broken, Budget(epochs=4), checkpoint=ckpt, key="k")
    again = LinearTask()
    log = train(again, Budget(epochs=4), checkpoint=ckpt, key="k")
    assert log.resumed_from == 2 and len(log.history) == 4
    assert torch.equal(again.w, ref.w)
    other = LinearTask()
    log2 = train(other, Budget(epochs=1), checkpoint=ckpt, key="another run")  # not resumed
    assert log2.resumed_from is None


def test_learnability_gate_flags_a_plateau_and_passes_a_learner():
    gate = LearnabilityGate(min_loss_drop=0.05, min_accuracy_gain=0.1)
    flat = gate.check(initial_loss=2.3026, final_loss=2.30)
    assert not flat.trained and "plateau" in flat.reason
    chance = gate.check(initial_loss=2.3, final_loss=1.5, train_accuracy=0.14, chance=0.1)
    assert not chance.trained and "chance" in chance.reason
    ok = gate.check(initial_loss=2.3, final_loss=0.4, train_accuracy=0.9, chance=0.1)
    assert ok.trained and ok.to_dict()["final_loss"] == 0.4
    assert not gate.check(float("nan"), 0.1).trained
    # on a real run: the learner passes, a constant-output stand-in does not
    assert train(LinearTask(), Budget(epochs=3)).gate(gate).trained
    log0 = train(LinearTask(lr=0.0), Budget(epochs=3))
    assert log0.initial == log0.final and not log0.gate(gate).trained
    with pytest.raises(ValueError, match="probe"):
        train(_NoProbe(), Budget(epochs=1)).gate()


class _NoProbe(LinearTask):
    def probe(self):
        return {}


class DivergingTask(LinearTask):
    """LinearTask whose ``diverge_at``-th step raises the non-finite-loss error of a diverged run."""

    def __init__(self, diverge_at, **kw):
        super().__init__(**kw)
        self.diverge_at = diverge_at

    def step(self, idx, progress):
        if self.calls + 1 == self.diverge_at:
            self.calls += 1
            self.w = self.w * float("nan")  # the weights a diverged step leaves behind
            raise FloatingPointError("non-finite loss: {'loss': nan}")
        return super().step(idx, progress)


def test_a_run_that_diverges_after_a_validated_epoch_keeps_its_best_epoch_and_says_so():
    task = DivergingTask(diverge_at=11)  # 4 steps per epoch: epoch 2, its third step
    res = train(task, Budget(epochs=10, patience=100), desc="toy")
    assert len(res.history) == 2 and res.steps == 10  # the broken epoch is not recorded
    assert res.diverged.startswith("epoch 2, step 11: non-finite loss")
    assert res.stopped == "diverged" and res.stop_detail == "at epoch 2, step 11; kept the best validated epoch 1"
    assert not res.capped
    assert torch.isfinite(task.w).all()  # the best epoch's weights, not the NaN ones
    assert res.final["loss"] < res.initial["loss"]  # the learnability check reads the kept weights


def test_a_run_that_diverges_before_any_validated_epoch_raises_naming_the_run_and_step():
    with pytest.raises(FloatingPointError, match=r"toy diverged at epoch 0, step 3: non-finite loss"):
        train(DivergingTask(diverge_at=3), Budget(epochs=10), desc="toy")
    with pytest.raises(FloatingPointError, match="epoch 1, step 6"):  # nothing to fall back on without restore_best
        train(DivergingTask(diverge_at=6), Budget(epochs=10, restore_best=False), desc="toy")


def test_combine_gates_lists_each_run_or_counts_them_and_names_the_weakest():
    from hgutils.loop import GateResult, combine_gates

    ok = GateResult(True, "fell 80 %", 2.0, 0.4)
    weak = GateResult(True, "fell 10 %", 2.0, 1.8)
    flat = GateResult(False, "still on its plateau", 2.0, 1.99)
    each = combine_gates({"seed 0": ok, "seed 1": flat})
    assert each == {"trained": False, "reason": "seed 0: fell 80 %; seed 1: still on its plateau"}
    assert combine_gates({"a": ok, "b": weak}, summary="count") == {
        "trained": True,
        "reason": "2/2 networks passed; weakest: fell 10 %",
    }
    counted = combine_gates({"a": ok, "b": flat, "c": weak}, summary="count", noun="seeds")
    assert counted == {"trained": False, "reason": "2/3 seeds passed; weakest: still on its plateau"}
    with pytest.raises(ValueError, match="at least one"):
        combine_gates({})
    with pytest.raises(ValueError, match="summary"):
        combine_gates({"a": ok}, summary="worst")


class ScriptedTask(LinearTask):
    """LinearTask whose validation score follows a script (one value per epoch; higher is better)."""

    def __init__(self, scores, improvement="relative"):
        super().__init__()
        self.script, self.improvement, self.epoch = list(scores), improvement, -1

    def batches(self, epoch):
        self.epoch = epoch
        return super().batches(epoch)

    def evaluate(self):
        return {"s": self.script[min(self.epoch, len(self.script) - 1)]}

    def score(self, metrics):
        return metrics["s"]


def test_improvement_is_relative_for_losses_and_absolute_for_accuracy():
    from hgutils.loop import improvement

    assert improvement(-3.10, -3.17, "relative") == pytest.approx(0.07 / 3.17)  # a loss 3.17 -> 3.10
    assert improvement(0.255, 0.25, "absolute") == pytest.approx(0.005)
    with pytest.raises(ValueError, match="relative"):
        improvement(1.0, 0.0, "percent")
    with pytest.raises(ValueError, match="min_delta"):
        Budget(epochs=3, min_delta=-0.1)
    with pytest.raises(ValueError, match="min_epochs"):
        Budget(epochs=3, min_epochs=-1)
    assert Budget(epochs=3).delta("relative") == 0.01 and Budget(epochs=3).delta("absolute") == 0.005
    assert Budget(epochs=3, min_delta=0.1).delta("absolute") == 0.1


def test_a_creeping_loss_stops_on_its_plateau():
    # notebook 07's encoder: validation loss 3.17 -> 3.10 over 58 epochs (0.04 % per epoch). Any gain used to
    # reset patience, so the run crept to its cap; under the plateau rule it stops once 15 epochs add up to
    # less than 1 %
    creep = [-(3.17 - 0.07 * e / 58) for e in range(150)]
    log = train(ScriptedTask(creep), Budget(epochs=150, patience=15))
    assert log.stopped == "plateau" and len(log.history) < 40 and not log.capped
    assert log.best_epoch == len(log.history) - 1  # the best weights are the last (best) epoch's, not the reference's
    old_rule = train(ScriptedTask(creep), Budget(epochs=150, patience=15, min_delta=0.0))
    assert old_rule.stopped == "budget" and len(old_rule.history) == 150  # any gain resets: to the cap


def test_a_flat_start_does_not_stop_a_run_before_its_minimum_epochs():
    # flat for 30 epochs, then rising (NFN_NP on notebook 01's zoo)
    flat_then_rise = [0.10] * 30 + [0.10 + 0.01 * k for k in range(1, 31)] + [0.40] * 40
    early = train(ScriptedTask(flat_then_rise, "absolute"), Budget(epochs=100, patience=15))
    assert early.stopped == "plateau" and len(early.history) == 16  # mistaken for a plateau
    log = train(ScriptedTask(flat_then_rise, "absolute"), Budget(epochs=100, patience=15, min_epochs=40))
    assert log.stopped == "plateau" and log.best_score == pytest.approx(0.40) and len(log.history) == 75
    never = train(ScriptedTask([0.10] * 100, "absolute"), Budget(epochs=100, patience=15, min_epochs=40))
    assert len(never.history) == 40  # a run that never leaves its start stops at its minimum


def test_a_steep_curve_at_the_ceiling_is_capped_and_a_plateau_at_the_ceiling_is_converged():
    steep = [-(3.0 - 0.05 * e) for e in range(20)]  # 1.7-3 % better every epoch
    log = train(ScriptedTask(steep), Budget(epochs=20, patience=5))
    assert log.stopped == "budget" and log.capped
    assert log.window_gain == pytest.approx((2.30 - 2.05) / 2.30)  # best of the last 5 (epoch 19) over epoch 14
    assert "capped" in log.describe() and "best epoch 20 of 20" in log.describe()
    flat_end = [-(3.0 - 0.1 * e) for e in range(10)] + [-2.1] * 10
    log2 = train(ScriptedTask(flat_end), Budget(epochs=20, patience=5, min_epochs=30))  # flat for its last 10
    assert log2.stopped == "budget" and not log2.capped and log2.window_gain == 0.0
    short = train(ScriptedTask(flat_end), Budget(epochs=20, patience=12))  # the window reaches the last gain
    assert short.stopped == "budget" and short.capped
    assert "converged" in log2.describe()
    blind = train(LinearTask(), Budget(epochs=2))  # without patience the window is the whole run
    assert blind.stopped == "budget"


def test_a_run_without_a_validation_score_reaching_its_budget_is_capped():
    class NoScore(LinearTask):
        def score(self, metrics):
            return None

    log = train(NoScore(), Budget(epochs=2, patience=1))
    assert log.stopped == "budget" and log.capped and math.isnan(log.window_gain)


def test_the_plateau_rule_resumes_with_its_reference_score(tmp_path):
    creep = [-(3.17 - 0.07 * e / 58) for e in range(150)]
    ref = train(ScriptedTask(creep), Budget(epochs=150, patience=15))

    class Dies(ScriptedTask):
        def step(self, idx, progress):
            if self.epoch == 12:
                raise KeyboardInterrupt("simulated interruption")
            return super().step(idx, progress)

    ckpt = tmp_path / "run.ckpt"
    with pytest.raises(KeyboardInterrupt):
        train(Dies(creep), Budget(epochs=150, patience=15), checkpoint=ckpt, key="k")
    again = train(ScriptedTask(creep), Budget(epochs=150, patience=15), checkpoint=ckpt, key="k")
    assert again.resumed_from == 12 and len(again.history) == len(ref.history)
    assert again.stopped == ref.stopped == "plateau" and again.window_gain == pytest.approx(ref.window_gain)
