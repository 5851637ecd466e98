#pragma once
// Internal to the compare window (compare_window.cpp: the runs and their
// pacing; compare_table.cpp: the table): one policy's run.
#include <QColor>
#include <QPointF>
#include <QString>

#include <memory>
#include <vector>

#include "ui/compare/compare_model.h"
#include "ui/compare/compare_window.h"
#include "ui/controller/sim_controller.h"

class QLabel;

namespace sl::ui {

class ClusterView;

struct CompareWindow::Run {
  QString policy;
  QColor color;
  SimController* ctl = nullptr;
  ClusterView* view = nullptr;
  QLabel* info = nullptr;
  CompareRunStats stats;
  int generation = 0;
  std::shared_ptr<const LiveFrame> frame;
  std::vector<QPointF> ttft99, violation, throughput;
};

}  // namespace sl::ui
