/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no global state) */
/* SG_IO v3/v4 and HDIO_GET_IDENTITY for the helper programs (sg-io.h). */
#include <errno.h>
#include <linux/bsg.h>
#include <linux/hdreg.h>
#include <scsi/sg.h>
#include <string.h>
#include <sys/ioctl.h>

#include "helpers/sg-io.h"
#include "shared/macro.h"

_Static_assert(sizeof(struct hd_driveid) == ATA_IDENTIFY_SIZE, "struct hd_driveid is 512 bytes");

int sg_io_v4(int fd, const struct sg_cmd *cmd, struct sg_status *st)
{
        struct sg_io_v4 io = {
                .guard = 'Q',
                .protocol = BSG_PROTOCOL_SCSI,
                .subprotocol = BSG_SUB_PROTOCOL_SCSI_CMD,
                .request_len = (uint32_t)cmd->cdb_len,
                .request = (uintptr_t)cmd->cdb,
                .max_response_len = SG_SENSE_MAX,
                .response = (uintptr_t)cmd->sense,
                .din_xfer_len = (uint32_t)cmd->data_len,
                .din_xferp = (uintptr_t)cmd->data,
                .timeout = cmd->timeout_ms,
        };

        if (cmd->cdb_len < 6 || cmd->cdb_len > 16 || cmd->data_len > UINT32_MAX)
                return -EINVAL;
        if (ioctl(fd, SG_IO, &io) < 0)
                return negative_errno();
        *st = (struct sg_status){
                .device_status = io.device_status,
                .transport_status = io.transport_status,
                .driver_status = io.driver_status,
                .sense_len = io.response_len,
        };
        return 0;
}

int sg_io_v3(int fd, const struct sg_cmd *cmd, struct sg_status *st)
{
        struct sg_io_hdr io = {
                .interface_id = 'S',
                .dxfer_direction = SG_DXFER_FROM_DEV,
                .cmd_len = (unsigned char)cmd->cdb_len,
                .mx_sb_len = SG_SENSE_MAX,
                .dxfer_len = (unsigned)cmd->data_len,
                .dxferp = cmd->data,
                .cmdp = (unsigned char *)cmd->cdb,
                .sbp = cmd->sense,
                .timeout = cmd->timeout_ms,
        };

        if (cmd->cdb_len < 6 || cmd->cdb_len > 16 || cmd->data_len > UINT32_MAX)
                return -EINVAL;
        if (ioctl(fd, SG_IO, &io) < 0)
                return negative_errno();
        *st = (struct sg_status){
                .device_status = io.status,
                .transport_status = io.host_status,
                .driver_status = io.driver_status,
                .msg_status = io.msg_status,
                .sense_len = io.sb_len_wr,
        };
        return 0;
}

int hdio_get_identity(int fd, uint8_t out[ATA_IDENTIFY_SIZE])
{
        struct hd_driveid id;

        if (ioctl(fd, HDIO_GET_IDENTITY, &id) < 0)
                return negative_errno();
        memcpy(out, &id, sizeof(id));
        return 0;
}
