// SPDX-License-Identifier: Apache-2.0
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>
#include <linux/uinput.h>
#include <string.h>
#include <sys/ioctl.h>

/// Answers uinput's UI_FF_UPLOAD request `request` (an EV_UINPUT event on the uinput
/// descriptor `fd`) with success (UI_BEGIN_FF_UPLOAD, UI_END_FF_UPLOAD); the uploaded
/// effect in `*effect`. 0, or -1 with errno set. (ioctl is variadic, which Swift cannot call.)
static inline int actiond_testdev_answer_ff_upload(int fd, unsigned int request, struct ff_effect *effect) {
  struct uinput_ff_upload upload;
  memset(&upload, 0, sizeof(upload));
  upload.request_id = request;
  if (ioctl(fd, UI_BEGIN_FF_UPLOAD, &upload) < 0) return -1;
  *effect = upload.effect;
  upload.retval = 0;
  return ioctl(fd, UI_END_FF_UPLOAD, &upload);
}

/// Answers uinput's UI_FF_ERASE request `request` with success (UI_BEGIN_FF_ERASE,
/// UI_END_FF_ERASE); the erased effect's id in `*effect_id`. 0, or -1 with errno set.
static inline int actiond_testdev_answer_ff_erase(int fd, unsigned int request, unsigned int *effect_id) {
  struct uinput_ff_erase erase;
  memset(&erase, 0, sizeof(erase));
  erase.request_id = request;
  if (ioctl(fd, UI_BEGIN_FF_ERASE, &erase) < 0) return -1;
  *effect_id = erase.effect_id;
  erase.retval = 0;
  return ioctl(fd, UI_END_FF_ERASE, &erase);
}
